package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, &stdout, &stderr) }()

	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	deadline := time.Now().Add(10 * time.Second)
	for url.FindString(stdout.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get(url.FindString(stdout.String()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-testid="toy-table"`) {
		t.Errorf("GET /: got %d, want the toy page", res.StatusCode)
	}

	cancel() // what Ctrl-C does
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("got exit %d, want %d; stderr %q", c, exitOK, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after the context ended")
	}
}

func TestServeClassroom(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--classroom", "--models", t.TempDir()}, nil, &stdout, &stderr)
	}()
	link := regexp.MustCompile(`instructor .*: (http://127\.0\.0\.1:\d+/\?teach=[0-9a-f]{64})\n`)
	deadline := time.Now().Add(10 * time.Second)
	for link.FindStringSubmatch(stdout.String()) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no instructor link printed; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get(link.FindStringSubmatch(stdout.String())[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-role="instructor"`) {
		t.Errorf("the instructor link: got %d, want the instructor's page", res.StatusCode)
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Errorf("got exit %d, want %d; stderr %q", c, exitOK, stderr.String())
	}
}

func TestServeUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"extra argument", []string{"serve", "now"}, exitUsage},
		{"bad flag", []string{"serve", "--port", "80"}, exitUsage},
		{"bad import size", []string{"serve", "--max-import", "0"}, exitUsage},
		{"bad address", []string{"serve", "--addr", "127.0.0.1:99999"}, exitError},
		{"not a toy", []string{"serve", "--model", "/nonexistent/model"}, exitError},
		{"no models folder", []string{"serve", "--models", "/nonexistent/models"}, exitUsage},
		{"bad max new tokens", []string{"serve", "--max-new-tokens", "0"}, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(context.Background(), c.args, nil, &stdout, &stderr); got != c.code {
				t.Errorf("got exit %d, want %d; stderr %q", got, c.code, stderr.String())
			}
			if stderr.Len() == 0 {
				t.Error("got no message on stderr")
			}
		})
	}
}
