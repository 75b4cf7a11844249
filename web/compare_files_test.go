package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/refdata"
)

// ggufModels makes a models folder holding the GGUF files of
// tiny-random-llama (as tiny/model-f32.gguf, tiny/model-q4_0.gguf, ...)
// and of stories260K (stories/...), from the shared reference data.
func ggufModels(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for link, rel := range map[string]string{"tiny": "models/tiny-random-llama/gguf", "stories": "models/stories260K"} {
		if err := os.Symlink(refdata.Need(t, rel), filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// twoFiles is a greedy comparison of tiny-random-llama's F32 and Q4_0
// files on "ab cd ba dc", whose greedy choices part at the second step
// (llama.cpp's too: llama-cpp-reference.json).
var twoFiles = form{"model": "tiny/model-f32.gguf", "compare_model": "tiny/model-q4_0.gguf",
	"input": "ids", "prompt": "1 314 422 364 472", "do_sample": "false", "max_new_tokens": "4"}

// TestCompareTwoFiles: Compare with a second model runs the prompt on both
// files, each run recorded with its own model and labelled by file and
// weight type, and shows where quantization changed the choice.
func TestCompareTwoFiles(t *testing.T) {
	s, sess, c := liveServer(t, Config{ModelsDir: ggufModels(t)}, 0)
	sendJSON(t, c, map[string]any{"type": "compare", "form": twoFiles})
	waitFor(t, c, "the comparison's end", finished)
	o := settle(t, s, c)
	for _, want := range []string{`data-divergence="1"`, "The runs first differ at step 2", "model-f32.gguf (f32)", "model-q4_0.gguf (q4_0)"} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the comparison has no %s", want)
		}
	}
	sess.Mu.Lock()
	defer sess.Mu.Unlock()
	runs := sess.Doc.Runs
	if len(runs) != 2 {
		t.Fatalf("got %d runs, want 2", len(runs))
	}
	for k, want := range []struct{ label, dtype string }{{"model-f32.gguf (f32)", "f32"}, {"model-q4_0.gguf (q4_0)", "q4_0"}} {
		r := runs[k]
		if r.Label != want.label || r.Trace.Model.DType != want.dtype {
			t.Errorf("run %d: got label %q, model dtype %q; want %q, %q", k, r.Label, r.Trace.Model.DType, want.label, want.dtype)
		}
	}
	if a, b := runs[0].Trace.Options.Seed, runs[1].Trace.Options.Seed; a != b {
		t.Errorf("got seeds %d and %d, want one random stream", a, b)
	}
}

func TestCompareTwoFilesErrors(t *testing.T) {
	_, _, c := liveServer(t, Config{ModelsDir: ggufModels(t)}, 0)
	with := func(k, v string) form {
		f := form{}
		for key, val := range twoFiles {
			f[key] = val
		}
		f[k] = v
		return f
	}
	for _, tc := range []struct {
		name string
		form form
		says string
	}{
		{"another model", with("compare_model", "stories/stories260K-f32.gguf"), "are not files of one model (token 259 is"},
		{"too many lines", with("variants", "greedy\nT=0.5\nT=0.7\nT=0.9"), "at most 3 lines of settings"},
		{"unknown model", with("compare_model", "nope.gguf"), `model "nope.gguf" is not on this server's list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sendJSON(t, c, map[string]any{"type": "compare", "form": tc.form})
			waitFor(t, c, "an error saying "+tc.says, errorSaying(tc.says))
		})
	}
}
