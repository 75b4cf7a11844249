// Package remotetest starts a real serving engine for tests: the build of
// llama.cpp's HTTP server in ../shared/tools/llama-server, found through
// refdata like every other piece of reference data.
package remotetest

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"tracer/engine/refdata"
)

// StartLlamaServer starts llama.cpp's server on 127.0.0.1 on a port the OS
// picks, with stories260K-f32.gguf and an F32 KV cache (its default F16
// cache moves probabilities by about 1e-3), and stops it when the test
// ends. It returns the server's URL. Outside CI it skips when the shared
// data is absent; in CI that fails, as refdata.Need does.
func StartLlamaServer(t testing.TB) string {
	t.Helper()
	bin := refdata.Need(t, "tools/llama-server/llama-server")
	model := refdata.Need(t, "models/stories260K/stories260K-f32.gguf")
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", "0", "-t", "1", "-c", "1024", "-ctk", "f32", "-ctv", "f32")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start llama-server: %v", err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		// On SIGTERM this build aborts on its way out (status 134): not a failure.
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	ready := make(chan string, 1)
	var (
		mu  sync.Mutex // guards log, written by the reader and read on failure
		log bytes.Buffer
	)
	logText := func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
	go func() {
		defer close(exited)
		listening := regexp.MustCompile(`server is listening on (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			if log.Len() < 1<<16 {
				log.WriteString(sc.Text() + "\n")
			}
			mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select { // a second "listening" line must not block the reader
				case ready <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
	}()
	select {
	case u := <-ready:
		return u
	case <-exited:
		t.Fatalf("llama-server exited before it was ready:\n%s", logText())
	case <-time.After(2 * time.Minute): // a safety net against a hang, not a measurement
		t.Fatalf("llama-server not ready after 2 minutes:\n%s", logText())
	}
	return ""
}
