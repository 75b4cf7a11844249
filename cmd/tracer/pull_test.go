package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"tracer/engine/refdata"

	"tracer/engine/hub/hubtest"
)

// fakeHub starts a fake Hub with a tiny transformers model (org/tiny), a
// gated copy of it (org/gated) and a llama2.c repository
// (karpathy/tinyllamas), and points the tracer binary's environment at it
// with an empty HF_HOME, which it returns.
func fakeHub(t *testing.T) (*hubtest.Hub, string) {
	t.Helper()
	model, tok := hubtest.Llama2c()
	h := hubtest.New(t,
		hubtest.Repo{ID: "org/tiny", Files: hubtest.TinyModel()},
		hubtest.Repo{ID: "org/gated", Files: hubtest.TinyModel(), Gated: true},
		hubtest.Repo{ID: "karpathy/tinyllamas", Files: map[string][]byte{"stories15M.bin": model, "tokenizer.bin": tok}},
	)
	home := t.TempDir()
	for k, v := range map[string]string{"HF_ENDPOINT": h.URL, "HF_HOME": home, "HF_HUB_CACHE": "", "HF_TOKEN": "", "HF_HUB_OFFLINE": ""} {
		t.Setenv(k, v)
	}
	return h, home
}

func TestPullPrintsTheSnapshotFolder(t *testing.T) {
	h, home := fakeHub(t)
	out, errOut, code := tracer(t, "", "pull", "org/tiny")
	want := filepath.Join(home, "hub", "models--org--tiny", "snapshots", h.Commit("org/tiny"))
	if code != 0 || out != want+"\n" {
		t.Fatalf("got %q (stderr %q, exit %d), want %q", out, errOut, code, want)
	}
	for _, line := range []string{"downloading model.safetensors (66.0 kB)", "done model.safetensors", "done config.json", "org/tiny at commit " + h.Commit("org/tiny")[:12] + ": 5 files, 66.3 kB downloaded"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("stderr lacks %q:\n%s", line, errOut)
		}
	}
	if strings.Contains(errOut, "\r") {
		t.Error("drew a terminal bar into a pipe")
	}
	if _, err := os.Stat(filepath.Join(want, "model.safetensors")); err != nil {
		t.Error(err)
	}

	// Offline, the cached model still pulls (from the cache).
	t.Setenv("HF_HUB_OFFLINE", "1")
	h.Close()
	if out, errOut, code := tracer(t, "", "pull", "org/tiny"); code != 0 || out != want+"\n" {
		t.Errorf("offline: got %q (stderr %q, exit %d), want %q", out, errOut, code, want)
	}
}

func TestPullFile(t *testing.T) {
	h, home := fakeHub(t)
	out, errOut, code := tracer(t, "", "pull", "karpathy/tinyllamas", "--file", "stories15M.bin")
	dir := filepath.Join(home, "hub", "models--karpathy--tinyllamas", "snapshots", h.Commit("karpathy/tinyllamas"))
	if code != 0 || out != filepath.Join(dir, "stories15M.bin")+"\n" {
		t.Fatalf("got %q (stderr %q, exit %d)", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.bin")); err != nil {
		t.Errorf("tokenizer.bin did not come along: %v", err)
	}
}

func TestPullErrors(t *testing.T) {
	fakeHub(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"gated", nil, []string{"pull", "org/gated"}, 1, "org/gated is gated or private: accept its license on the Hub and set HF_TOKEN"},
		{"missing file", nil, []string{"pull", "org/tiny", "--file", "nope.bin"}, 1, "org/tiny has no file nope.bin at revision main"},
		{"missing repo", nil, []string{"pull", "org/nope"}, 1, "org/nope was not found on the Hub"},
		{"offline", map[string]string{"HF_HUB_OFFLINE": "1"}, []string{"pull", "org/tiny"}, 1, "org/tiny is not in the Hugging Face cache"},
		{"offline names the pull command", map[string]string{"HF_HUB_OFFLINE": "1"}, []string{"pull", "org/tiny", "--file", "config.json"}, 1, "download it with the network on (tracer pull org/tiny --file config.json)"},
		{"no model", nil, []string{"pull"}, 64, "want exactly one ORG/NAME"},
		{"two models", nil, []string{"pull", "a/b", "c/d"}, 64, "want exactly one ORG/NAME"},
		{"bad name", nil, []string{"pull", "a/b/c"}, 64, "not a Hugging Face model name"},
		{"bad file", nil, []string{"pull", "org/tiny", "--file", "../../etc/passwd"}, 64, "not a file name"},
		{"bad flag", nil, []string{"pull", "--nope"}, 64, "flag provided but not defined"},
		{"models argument", nil, []string{"models", "extra"}, 64, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, errOut, code := tracer(t, "", tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.want)
			}
			if code == 1 && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("want one clear line on stderr, got %q", errOut)
			}
		})
	}
}

func TestModelsListsCacheAndFolders(t *testing.T) {
	_, home := fakeHub(t)
	for _, args := range [][]string{{"pull", "org/tiny"}, {"pull", "karpathy/tinyllamas", "--file", "stories15M.bin"}} {
		if _, errOut, code := tracer(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	// A --models folder with a transformers model folder and a llama2.c
	// checkpoint beside its tokenizer.
	folder := t.TempDir()
	os.Mkdir(filepath.Join(folder, "tiny"), 0o755)
	for name, b := range hubtest.TinyModel() {
		os.WriteFile(filepath.Join(folder, "tiny", name), b, 0o644)
	}
	model, tok := hubtest.Llama2c()
	os.WriteFile(filepath.Join(folder, "stories.bin"), model, 0o644)
	os.WriteFile(filepath.Join(folder, "tokenizer.bin"), tok, 0o644)
	os.WriteFile(filepath.Join(folder, "notes.bin"), []byte("not a model"), 0o644)

	out, errOut, code := tracer(t, "", "models", "--json", "--models", folder)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []modelRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	want := []modelRow{
		{Name: "karpathy/tinyllamas", File: "stories15M.bin", Source: "hf-cache", Format: "llama2.c", Architecture: "llama2.c", Params: 920, DType: "float32", Tokenizer: true, SizeBytes: int64(len(model) + len(tok))},
		{Name: "org/tiny", Source: "hf-cache", Format: "safetensors", Architecture: "LlamaForCausalLM", Params: 16448, DType: "float32", Tokenizer: true, ChatTemplate: true},
		{Name: filepath.Join(folder, "stories.bin"), Source: "folder", Format: "llama2.c", Architecture: "llama2.c", Params: 920, DType: "float32", Tokenizer: true, SizeBytes: int64(len(model))},
		{Name: filepath.Join(folder, "tiny"), Source: "folder", Format: "safetensors", Architecture: "LlamaForCausalLM", Params: 16448, DType: "float32", Tokenizer: true, ChatTemplate: true},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %s", len(rows), len(want), out)
	}
	for i, w := range want {
		g := rows[i]
		g.Path, g.Commit, g.Revisions = "", "", nil
		if w.SizeBytes == 0 {
			g.SizeBytes = 0
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("row %d:\ngot  %+v\nwant %+v", i, g, w)
		}
	}
	tiny := rows[1]
	if len(tiny.Revisions) != 1 || tiny.Revisions[0] != "main" {
		t.Errorf("cache row: revisions %v, want [main]", tiny.Revisions)
	}
	if tiny.Path != filepath.Join(home, "hub", "models--org--tiny", "snapshots", tiny.Commit) || tiny.SizeBytes < 65000 {
		t.Errorf("cache row: path %s size %d", tiny.Path, tiny.SizeBytes)
	}

	out, _, code = tracer(t, "", "models")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], "karpathy/tinyllamas (stories15M.bin)  llama2.c") {
		t.Fatalf("table: exit %d:\n%s", code, out)
	}
	header, row := lines[0], lines[2]
	if !strings.HasPrefix(header, "NAME") || strings.Index(header, "ARCHITECTURE") != strings.Index(row, "LlamaForCausalLM") {
		t.Errorf("columns are not aligned:\n%s", out)
	}
	if got := strings.Fields(row); strings.Join(got, " ") != "org/tiny LlamaForCausalLM 16.4K float32 "+strings.Join(strings.Fields(humanBytes(tiny.SizeBytes)), " ")+" yes yes" {
		t.Errorf("row %q", row)
	}
}

func TestModelsWithEmptyCache(t *testing.T) {
	fakeHub(t)
	out, errOut, code := tracer(t, "", "models")
	if code != 0 || out != "" || !strings.Contains(errOut, "tracer pull ORG/NAME") {
		t.Errorf("got %q, stderr %q, exit %d; want a hint on stderr", out, errOut, code)
	}
	out, _, code = tracer(t, "", "models", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json: got %q, exit %d; want []", out, code)
	}
}

func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := &progressBar{w: &b, started: map[string]bool{}, finished: map[string]bool{}}
	p.update("a.bin", 500, 2000)
	p.update("a.bin", 2000, 2000)
	p.update("a.bin", 2000, 2000)
	p.update("b.json", 0, 10)
	p.update("b.json", 10, 10)
	want := "tracer pull: resuming at 500 B of a.bin (2.0 kB)\ntracer pull: done a.bin\n" +
		"tracer pull: downloading b.json (10 B)\ntracer pull: done b.json\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := barLine("model.safetensors", 135e6, 270e6); !strings.Contains(got, "[############------------]  50%  135.0 MB / 270.0 MB") {
		t.Errorf("bar %q", got)
	}
}

// TestPulledModelRunsOffline pulls a real (tiny, random) transformers model
// and a llama2.c checkpoint with their tokenizers from the fake Hub, then
// runs them by name with the network off.
func TestPulledModelRunsOffline(t *testing.T) {
	golden := refdata.Need(t, "golden/tiny-llama")
	files := map[string][]byte{}
	for _, f := range []string{
		filepath.Join(golden, "config.json"), filepath.Join(golden, "generation_config.json"), filepath.Join(golden, "model.safetensors"),
		refdata.Need(t, "tokenizers/smollm2-135m-instruct/tokenizer.json"),
		refdata.Need(t, "tokenizers/smollm2-135m-instruct/tokenizer_config.json"),
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(f)] = b
	}
	stories, err := os.ReadFile(refdata.Need(t, "models/stories260K/stories260K.bin"))
	if err != nil {
		t.Fatal(err)
	}
	tok512, err := os.ReadFile(refdata.Need(t, "models/stories260K/tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t,
		hubtest.Repo{ID: "org/tiny-llama", Files: files},
		hubtest.Repo{ID: "karpathy/tinyllamas", Files: map[string][]byte{"stories260K/stories260K.bin": stories, "stories260K/tok512.bin": tok512}},
	)
	for k, v := range map[string]string{"HF_ENDPOINT": h.URL, "HF_HOME": t.TempDir(), "HF_HUB_CACHE": "", "HF_TOKEN": "", "HF_HUB_OFFLINE": ""} {
		t.Setenv(k, v)
	}
	if _, errOut, code := tracer(t, "", "pull", "org/tiny-llama"); code != 0 {
		t.Fatalf("pull: exit %d: %s", code, errOut)
	}
	bin, errOut, code := tracer(t, "", "pull", "karpathy/tinyllamas", "--file", "stories260K/stories260K.bin")
	if code != 0 {
		t.Fatalf("pull --file: exit %d: %s", code, errOut)
	}
	bin = strings.TrimSpace(bin)
	local := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(local, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, errOut, code := tracer(t, "", "run", "--model", local, "--prompt", "Hello", "--max-new-tokens", "5")
	if code != 0 {
		t.Fatalf("run on the folder: exit %d: %s", code, errOut)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	h.Close()
	got, errOut, code := tracer(t, "", "run", "--model", "org/tiny-llama", "--prompt", "Hello", "--max-new-tokens", "5")
	if code != 0 || got != want {
		t.Errorf("offline run by name: %q (stderr %q, exit %d), want %q as from the folder", got, errOut, code, want)
	}
	// The checkpoint came with its tokenizer (tok512.bin beside it), so it
	// takes a text prompt and prints text.
	got, errOut, code = tracer(t, "", "run", "--model", bin, "--prompt", "Once upon a time", "--max-new-tokens", "8")
	if code != 0 || !strings.HasPrefix(got, " ") && len(strings.TrimSpace(got)) == 0 {
		t.Errorf("offline run of %s: %q (stderr %q, exit %d), want text", bin, got, errOut, code)
	}
}

// TestTwoPullProcessesShareOneDownload: two `tracer pull` processes of one
// model at once. The fake Hub holds the first one's weights download open
// until the second says on stderr that it waits for the first's lock; then
// both finish, the weights come down once, and both print the snapshot.
func TestTwoPullProcessesShareOneDownload(t *testing.T) {
	h, home := fakeHub(t)
	started, release := h.Gate("org/tiny", "model.safetensors")
	defer release()
	want := filepath.Join(home, "hub", "models--org--tiny", "snapshots", h.Commit("org/tiny")) + "\n"

	first := exec.Command(binary, "pull", "org/tiny")
	var out1, err1 bytes.Buffer
	first.Stdout, first.Stderr = &out1, &err1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	firstErr := make(chan error, 1)
	go func() { firstErr <- first.Wait() }()
	select {
	case <-started:
	case err := <-firstErr:
		t.Fatalf("the first pull ended before downloading the weights: %v\n%s", err, err1.String())
	}

	second := exec.Command(binary, "pull", "org/tiny")
	var out2 bytes.Buffer
	second.Stdout = &out2
	stderr, err := second.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	var err2 strings.Builder
	waited := false
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		err2.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "tracer pull: waiting for another download of model.safetensors to finish (it holds ") {
			waited = true
			release()
		}
	}
	release() // the second ended without waiting: let the first go on too
	if !waited {
		t.Errorf("the second pull did not wait for the first; its stderr:\n%s", err2.String())
	}
	if err := <-firstErr; err != nil {
		t.Errorf("the first pull: %v\n%s", err, err1.String())
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the second pull: %v\n%s", err, err2.String())
	}
	if out1.String() != want || out2.String() != want {
		t.Errorf("the pulls printed %q and %q, want %q", out1.String(), out2.String(), want)
	}
	var gets int
	for _, r := range h.Requests() {
		if r.Host == "files" && r.Method == "GET" {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("the weights were downloaded %d times, want once", gets)
	}
}
