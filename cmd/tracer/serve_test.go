package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
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

// TestServeLimitFlagsUsage runs the binary with limits it must refuse:
// each refusal names its flag.
func TestServeLimitFlagsUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"zero run memory", []string{"--max-run-mib", "0"}, "--max-run-mib must be positive"},
		{"negative pulls", []string{"--max-pulls", "-1"}, "--max-pulls must be positive"},
		{"zero sessions", []string{"--max-sessions", "0"}, "--max-sessions must be positive"},
		{"zero rows × beams", []string{"--max-rows-beams", "0"}, "--max-rows-beams must be positive"},
		{"zero page runs", []string{"--max-page-runs", "0"}, "--max-page-runs must be positive"},
		{"zero branches", []string{"--max-branches", "0"}, "--max-branches must be positive"},
		{"zero runs", []string{"--runs", "0"}, "--runs must be positive"},
		{"zero imports", []string{"--max-import-mib", "0"}, "--max-import-mib must be positive"},
		{"overflowing pull size", []string{"--max-pull-mib", "9223372036854775807"}, "--max-pull-mib 9223372036854775807 is too large"},
		{"host with a scheme", []string{"--allow-host", "http://class.example"}, "--allow-host"},
		{"host with a port", []string{"--allow-host", "class.example:8080"}, "without scheme or port"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := tracer(t, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
			if code != exitUsage || !strings.Contains(errOut, c.says) {
				t.Errorf("got exit %d, stderr %q; want %d saying %q", code, errOut, exitUsage, c.says)
			}
		})
	}
}

// startBinary runs tracer serve as a user does and returns its URL; the
// server gets SIGINT when the test ends.
func startBinary(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HF_HUB_OFFLINE=", "HF_HUB_CACHE="+t.TempDir(), "HF_ENDPOINT=http://127.0.0.1:1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("tracer serve did not stop on SIGINT; stderr %q", stderr.String())
		}
	})
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	deadline := time.Now().Add(20 * time.Second)
	for url.FindString(stdout.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return url.FindString(stdout.String())
}

// TestServeClassroomFlags runs the binary with the classroom's limits and
// checks each reaches the server: the Host check with --allow-host, the
// rows × beams limit and --no-pull.
func TestServeClassroomFlags(t *testing.T) {
	base := startBinary(t, "--allow-host", "class.example", "--max-rows-beams", "4", "--no-pull")
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	var session string
	for _, c := range []struct {
		host   string
		status int
	}{
		{"evil.example:" + port, http.StatusForbidden},
		{"class.example:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
	} {
		req, _ := http.NewRequest("GET", base, nil)
		req.Host = c.host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("Host %s: got %d, want %d", c.host, res.StatusCode, c.status)
		}
		if m := regexp.MustCompile(`data-session="([0-9a-f]+)"`).FindSubmatch(body); m != nil {
			session = string(m[1])
		}
	}
	if session == "" {
		t.Fatal("no page session")
	}
	c, _, err := websocket.DefaultDialer.Dial("ws://127.0.0.1:"+port+"/ws?session="+session, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, m := range []struct{ msg, says string }{
		{`{"type": "generate", "form": {"model": "toy", "num_beams": "8"}}`, "--max-rows-beams"},
		{`{"type": "pull", "repo": "org/tiny"}`, "--no-pull"},
	} {
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte(m.msg)); err != nil {
			t.Fatal(err)
		}
		var o struct{ Type, Message string }
		for o.Type != "error" {
			if err := c.ReadJSON(&o); err != nil {
				t.Fatalf("%s: %v", m.msg, err)
			}
		}
		if !strings.Contains(o.Message, m.says) {
			t.Errorf("%s: got %q, want an error naming %s", m.msg, o.Message, m.says)
		}
	}
}

// TestServeServerFlags runs the binary with --server values it must
// refuse: each refusal is a usage error naming the flag, and never repeats
// a password given in the URL.
func TestServeServerFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"no name", []string{"--server", "http://127.0.0.1:8080"}, "--server"},
		{"empty name", []string{"--server", "=http://127.0.0.1:8080"}, "want NAME=URL"},
		{"name with a slash", []string{"--server", "a/b=http://127.0.0.1:8080"}, "without spaces, slashes or colons"},
		{"no scheme", []string{"--server", "gpu=127.0.0.1:8080"}, "--server gpu=127.0.0.1:8080: want http://HOST:PORT"},
		{"other scheme", []string{"--server", "gpu=ftp://user:hunter2@host"}, "--server gpu=ftp://...@host: want http://HOST:PORT"},
		{"name twice", []string{"--server", "gpu=http://a:1", "--server", "gpu=http://b:2"}, "given twice"},
		{"bad key variable", []string{"--server", "gpu=http://a:1", "--server-key-env", "A=B"}, "--server-key-env"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := tracer(t, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
			if code != exitUsage || !strings.Contains(errOut, c.says) {
				t.Errorf("got exit %d, stderr %q; want %d saying %q", code, errOut, exitUsage, c.says)
			}
			if strings.Contains(errOut, "hunter2") {
				t.Errorf("stderr repeats the password: %q", errOut)
			}
		})
	}
}

// TestServeServerModels runs the binary with a fake OpenAI-compatible
// server that wants a key from the variable --server-key-env names, and
// one that is down: the page's menu lists the first's model under its
// name and says the other is unavailable, and the key never reaches the
// page.
func TestServeServerModels(t *testing.T) {
	const key = "sk-test-7f3a9c"
	var mu sync.Mutex
	var auth []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Invalid API key"}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"Qwen/Qwen2.5-32B-Instruct","owned_by":"vllm"}]}`)
	}))
	defer fake.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	t.Setenv("TRACER_TEST_SERVER_KEY", key)
	base := startBinary(t, "--server", "gpu="+fake.URL, "--server", "off="+down, "--server-key-env", "TRACER_TEST_SERVER_KEY")
	res, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	for _, want := range []string{`value="server:gpu/Qwen/Qwen2.5-32B-Instruct"`, "gpu: Qwen/Qwen2.5-32B-Instruct (vllm server)", "off: unavailable (connection refused"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page's menu has no %q", want)
		}
	}
	if strings.Contains(page, key) {
		t.Error("the page shows the API key")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer "+key {
		t.Errorf("the server got Authorization %q, want the key from TRACER_TEST_SERVER_KEY", auth)
	}
}

// TestServeAddressesCanBeTyped: listening on every interface, serve prints
// the machine's addresses (IPv4 first), never [::] or 0.0.0.0, which no
// student can type.
func TestServeAddressesCanBeTyped(t *testing.T) {
	ifaces := func() ([]net.Addr, error) {
		return []net.Addr{
			&net.IPNet{IP: net.ParseIP("127.0.0.1"), Mask: net.CIDRMask(8, 32)},
			&net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)},
			&net.IPNet{IP: net.ParseIP("2001:db8::5"), Mask: net.CIDRMask(64, 128)},
			&net.IPNet{IP: net.ParseIP("192.168.1.5"), Mask: net.CIDRMask(24, 32)},
		}, nil
	}
	for _, listen := range []string{"0.0.0.0", "::"} {
		got := typeableAddrs(&net.TCPAddr{IP: net.ParseIP(listen), Port: 18434}, ifaces)
		want := []string{"192.168.1.5:18434", "[2001:db8::5]:18434", "127.0.0.1:18434"}
		if !slices.Equal(got, want) {
			t.Errorf("listening on %s: got %v, want %v", listen, got, want)
		}
	}
	if got := typeableAddrs(&net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 80}, ifaces); !slices.Equal(got, []string{"10.0.0.2:80"}) {
		t.Errorf("listening on one address: got %v", got)
	}
	// The real command, on every interface: no unspecified address printed,
	// and the students' link answers.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"serve", "--addr", "0.0.0.0:0", "--classroom"}, nil, &stdout, &stderr)
	}()
	link := regexp.MustCompile(`students open (http://\S+/)\n`)
	deadline := time.Now().Add(10 * time.Second)
	for link.FindStringSubmatch(stdout.String()) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no students' link printed; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out := stdout.String(); strings.Contains(out, "[::]") || strings.Contains(out, "0.0.0.0") {
		t.Errorf("serve --addr 0.0.0.0:0 printed an address no one can type:\n%s", out)
	}
	students := link.FindStringSubmatch(stdout.String())[1]
	res, err := http.Get(students)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("the students' link: got %s", res.Status)
	}
	// The instructor's page shows the link serve printed (issue 37).
	teach := regexp.MustCompile(`instructor \(keep this link to yourself\): (http://\S+)\n`).FindStringSubmatch(stdout.String())
	if teach == nil {
		t.Fatalf("no instructor's link printed:\n%s", stdout.String())
	}
	res, err = http.Get(teach[1])
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := `data-testid="class-link">` + students + `<`; !strings.Contains(string(page), want) {
		t.Errorf("the instructor's page does not show the students' link %s", students)
	}
	cancel()
	<-code
}
