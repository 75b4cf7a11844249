package remote

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// A LlamaServer is a llama.cpp server process (llama-server) started on
// loopback: for tests against a real serving engine, and for tracer bench
// --against-llama-server.
type LlamaServer struct {
	URL string // http://127.0.0.1:PORT

	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex   // guards log
	log    bytes.Buffer // the server's first 64 KiB of output, for errors
}

// StartLlamaServer runs bin with args, which must have it listen on
// 127.0.0.1 at a port the OS picks (its host and port options: 127.0.0.1
// and 0), and waits up to ready for the line in which it says where it
// listens. The error says why it did not start, with the end of what it
// printed. The process ends with ctx or Close.
func StartLlamaServer(ctx context.Context, bin string, ready time.Duration, args ...string) (*LlamaServer, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &LlamaServer{cmd: cmd, exited: make(chan struct{})}
	listening := make(chan string, 1)
	go func() {
		defer close(s.exited)
		re := regexp.MustCompile(`server is listening on (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.mu.Lock()
			if s.log.Len() < 1<<16 {
				s.log.WriteString(sc.Text() + "\n")
			}
			s.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select { // a second "listening" line must not block the reader
				case listening <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
	}()
	select {
	case s.URL = <-listening:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("%s exited before it listened:\n%s", bin, s.LogTail())
	case <-time.After(ready):
		s.Close()
		return nil, fmt.Errorf("%s did not listen within %v:\n%s", bin, ready, s.LogTail())
	}
}

// LogTail is the end of what the server printed (at most 2000 bytes of
// its first 64 KiB).
func (s *LlamaServer) LogTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.log.Bytes()
	return string(b[max(0, len(b)-2000):])
}

// Close stops the server and waits for it: SIGTERM, then after 10 s
// SIGKILL. (This build aborts on its way out after SIGTERM: no error of
// the caller's.)
func (s *LlamaServer) Close() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	return nil
}
