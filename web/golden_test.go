package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/bench"
	"tracer/engine/hub/hubtest"
	"tracer/engine/models"
	"tracer/engine/refdata"
	"tracer/web/catalog"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
)

// realModels makes a models folder that links to tiny-gpt2 and the
// stories260K folder of the shared reference data (found through refdata:
// a skip when absent, a failure in CI).
func realModels(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gpt2 := refdata.Need(t, "golden/tiny-gpt2")
	stories := refdata.Need(t, "models/stories260K")
	for _, m := range []struct{ link, target, open string }{
		{"tiny-gpt2", gpt2, gpt2},
		{"stories260K", stories, filepath.Join(stories, "stories260K.bin")},
	} {
		l, err := models.Open(m.open)
		if err != nil {
			t.Fatalf("open %s: %v", m.open, err)
		}
		l.Close()
		if err := os.Symlink(m.target, filepath.Join(dir, m.link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestModelsFolderScan(t *testing.T) {
	dir := realModels(t)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a model"), 0o644)
	os.WriteFile(filepath.Join(dir, "loop.json"), []byte(testsupport.LoopTable), 0o644)
	toyModel, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.New(toyModel, dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names, labels []string
	for _, e := range c.List()[1:] { // after the toy
		names = append(names, e.Name)
		labels = append(labels, e.Label)
	}
	got := strings.Join(names, " ")
	want := "loop.json stories260K/stories260K-f16.gguf stories260K/stories260K-f32.gguf stories260K/stories260K.bin tiny-gpt2"
	if got != want {
		t.Errorf("got models %q, want %q (not tok512.bin or notes.txt)", got, want)
	}
	if l := strings.Join(labels, "; "); !strings.Contains(l, "stories260K-f16.gguf (gguf llama, f16)") || !strings.Contains(l, "stories260K.bin (llama2.c)") {
		t.Errorf("got labels %q, want the GGUF files labelled with architecture and type", l)
	}
}

func TestGenerateRealModels(t *testing.T) {
	dir := realModels(t)
	// The server's bandwidth probe is stood in for by a fixed figure.
	machine := bench.Machine{Threads: 2, Passes: 10, CacheBytes: 32 << 20, DRAM: bench.Bandwidth{MedianGBps: 40}, Cache: bench.Bandwidth{MedianGBps: 120}}
	s, sess, c := liveServer(t, Config{ModelsDir: dir, Machine: func() bench.Machine { return machine }}, 0)
	cases := []struct {
		name string
		form form
		want []string
	}{
		{"tiny-gpt2", form{"model": "tiny-gpt2", "input": "ids", "prompt": "15496 11 616 1438 318", "max_new_tokens": "6", "do_sample": "true", "top_k": "20", "top_p": "0.9", "seed": "3"},
			[]string{`data-stage="top_k"`, `data-stage="top_p"`, `data-testid="draw-marker"`, `data-testid="kv-total"`, `data-testid="traffic-achieved"`, `data-testid="chart-kv"`, `data-testid="chart-cost"`}},
		{"stories260K", form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "8"},
			[]string{`data-testid="kv-total"`, `data-testid="token-hex"`, `data-testid="machine-bandwidth" data-resident="true">120.0 GB/s (CPU cache)<`, `data-testid="traffic-where">Cache-resident`, "%)</dd>", `data-testid="prompt-tokens"`, "The prompt as tokens (5)"}},
		{"stories260K GGUF, F16", form{"model": "stories260K/stories260K-f16.gguf", "prompt": "Once upon a time", "max_new_tokens": "8"},
			[]string{`data-testid="kv-total"`, `data-testid="token-hex"`, `data-testid="prompt-tokens"`, "The prompt as tokens (5)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := generate(t, s, c, tc.form)
			if !strings.Contains(o.HTML, `data-state="done"`) {
				t.Fatalf("the run did not finish: %.500s", o.HTML)
			}
			for _, w := range tc.want {
				if !strings.Contains(o.HTML, w) {
					t.Errorf("the last step's view has no %s", w)
				}
			}
			if tr := sessionTrace(sess); len(tr.Steps) == 0 || tr.Steps[0].KV == nil {
				t.Errorf("got %d steps, want steps with the KV cache recorded", len(tr.Steps))
			}
		})
	}
	t.Run("branch reuses the cache", func(t *testing.T) {
		generate(t, s, c, form{"model": "tiny-gpt2", "input": "ids", "prompt": "15496 11 616", "max_new_tokens": "5"})
		sendJSON(t, c, map[string]any{"type": "branch", "step": 3, "id": 42})
		waitFor(t, c, "the branch", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "branch-tree") })
		settle(t, s, c)
		b := sessionTrace(sess).Branches[0]
		if len(b.Steps) != 2 || len(b.Steps[0].Rows[0].InputIDs) != 1 || b.Steps[0].Phase != "decode" {
			t.Errorf("branch steps %d, first fed %v (%s); want 2 steps, the first decoding one token from the kept cache", len(b.Steps), b.Steps[0].Rows[0].InputIDs, b.Steps[0].Phase)
		}
	})
}

func TestHuggingFaceCacheScan(t *testing.T) {
	cache := t.TempDir()
	root := filepath.Join(cache, "models--test--tiny")
	snap := filepath.Join(root, "snapshots", "0123456789abcdef0123456789abcdef01234567")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "refs"), 0o755)
	os.WriteFile(filepath.Join(root, "refs", "main"), []byte("0123456789abcdef0123456789abcdef01234567"), 0o644)
	for name, data := range hubtest.TinyModel() {
		if err := os.WriteFile(filepath.Join(snap, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	toyModel, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.New(toyModel, "", cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := c.List()[1:] // after the toy
	if len(got) != 1 || got[0].Name != "test/tiny" || got[0].Path != snap {
		t.Fatalf("got %+v, want test/tiny at its snapshot", got)
	}
	if _, err := c.Open("test/other"); err == nil || !strings.Contains(err.Error(), "not on this server's list") {
		t.Errorf("opening a model not in the cache: %v", err)
	}
}
