package web

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/lessons"
	"tracer/trace"
)

// twoModelsDir returns a models folder whose first model cannot run the
// lessons (tiny-gpt2 has no tokenizer) and whose next two can (two copies
// of stories260K, so that the picker has a choice to switch to).
func twoModelsDir(t *testing.T) string {
	t.Helper()
	gpt2 := refdata.Need(t, "golden/tiny-gpt2")
	bin := refdata.Need(t, "models/stories260K/stories260K.bin")
	dir := t.TempDir()
	if err := os.Symlink(gpt2, filepath.Join(dir, "a-tiny-gpt2")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stories260K", "zz-stories"} {
		sub := filepath.Join(dir, name)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"stories260K.bin", "tok512.bin"} {
			if err := os.Symlink(filepath.Join(filepath.Dir(bin), f), filepath.Join(sub, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

const (
	storiesName = "stories260K/stories260K.bin"
	copyName    = "zz-stories/stories260K.bin"
)

// TestLessonPicksARunnableModel serves the lessons with a model without a
// tokenizer first in the list: the real steps run on stories260K, offer the
// other copy, list tiny-gpt2 disabled, and show neither a server path nor a
// command-line flag.
func TestLessonPicksARunnableModel(t *testing.T) {
	dir := twoModelsDir(t)
	srv, err := New(Config{ModelsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	runModel := regexp.MustCompile(`data-testid="run-model">([^<]*)<`)
	for _, tc := range []struct {
		name, query, want string
		note              bool
	}{
		{"default", "", storiesName, false},
		{"chosen", "&model=" + url.QueryEscape(copyName), copyName, false},
		{"no-tokenizer-asked", "&model=a-tiny-gpt2", storiesName, true},
		{"unknown-asked", "&model=nope", storiesName, false},
	} {
		for _, lang := range lessons.Languages() {
			t.Run(tc.name+"/"+lang, func(t *testing.T) {
				code, body := get(t, h, "/lessons/generate-with-a-small-lm/the-call?lang="+lang+tc.query)
				if code != 200 {
					t.Fatalf("got status %d, want 200", code)
				}
				m := runModel.FindStringSubmatch(body)
				if m == nil || m[1] != tc.want {
					t.Errorf("got the run on %q, want %q", m, tc.want)
				}
				for _, bad := range []string{dir, "--prompt-ids", `data-testid="lesson-error"`} {
					if strings.Contains(body, bad) {
						t.Errorf("the page holds %q", bad)
					}
				}
				if !strings.Contains(body, `<option value="a-tiny-gpt2" disabled>`) {
					t.Errorf("got no disabled tiny-gpt2 in the picker, want it listed with its reason")
				}
				if got := strings.Contains(body, `data-testid="model-note"`); got != tc.note {
					t.Errorf("got a note on the model asked for: %v, want %v", got, tc.note)
				}
			})
		}
	}
}

// TestDeepLinkOpensRun opens the debugger on a run by its link, and on a
// comparison, and checks what the session holds by exporting it.
func TestDeepLinkOpensRun(t *testing.T) {
	dir := twoModelsDir(t)
	srv, err := New(Config{ModelsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	session := regexp.MustCompile(`data-session="([^"]+)"`)
	for _, tc := range []struct {
		name, query string
		runs        int
		newIDs      int
		errText     string
	}{
		{"run", "model=" + url.QueryEscape(storiesName) + "&prompt=Once+upon&max_new_tokens=5&do_sample=false", 1, 5, ""},
		{"compare", "model=" + url.QueryEscape(storiesName) + "&prompt=Once+upon&seed=7&variants=" + url.QueryEscape("max_new_tokens=4 do_sample=false\nmax_new_tokens=4 do_sample=true temperature=0.7"), 2, 4, ""},
		{"no-tokenizer", "model=a-tiny-gpt2&prompt=Once", 1, -1, "tokenizer"},
		{"unknown-field", "model=toy&colour=red", 1, -1, "unknown setting colour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, h, "/?"+tc.query)
			if code != 200 {
				t.Fatalf("got status %d, want 200", code)
			}
			for _, bad := range []string{dir, "--prompt-ids"} {
				if strings.Contains(body, bad) {
					t.Errorf("the page holds %q", bad)
				}
			}
			if tc.errText != "" && !strings.Contains(body, tc.errText) {
				t.Errorf("the page does not say %q", tc.errText)
			}
			m := session.FindStringSubmatch(body)
			if m == nil {
				t.Fatal("no session on the page")
			}
			for k := range tc.runs {
				_, js := get(t, h, "/export?session="+m[1]+"&run="+string(rune('0'+k)))
				tr, err := trace.Read(bytes.NewReader([]byte(js)), 1<<24)
				if err != nil {
					t.Fatalf("run %d: export: %v", k, err)
				}
				if tc.newIDs < 0 {
					if tr.Model.Kind != "toy" {
						t.Errorf("got a %s run, want the toy's after a bad link", tr.Model.Kind)
					}
					continue
				}
				if len(tr.Output.NewIDs) != tc.newIDs || tr.Prompt.Text != "Once upon" {
					opts, _ := json.Marshal(tr.Options)
					t.Errorf("run %d: got %d new ids from %q (%s), want %d from %q", k, len(tr.Output.NewIDs), tr.Prompt.Text, opts, tc.newIDs, "Once upon")
				}
			}
		})
	}
}

// TestLessonFiguresShowWhatTextSays checks that the figures draw what the
// steps' texts point at, in both languages.
func TestLessonFiguresShowWhatTextSays(t *testing.T) {
	dir := twoModelsDir(t)
	srv, err := New(Config{ModelsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	for _, tc := range []struct {
		step string
		want []string // test ids or text the page must hold
	}{
		{"one-token-at-a-time/forward-pass", []string{`data-testid="candidate-logit"`}},
		{"generate-with-a-small-lm/prompt-then-new", []string{`data-testid="output-ids"`}},
		{"kv-cache/what-the-cache-holds", []string{`data-testid="step-kv">9 positions`}},
		{"greedy-and-sampling/greedy-vs-sampled", []string{`data-testid="part-ways"`, `data-testid="side-draw"`}},
		{"greedy-and-sampling/temperature", []string{`data-testid="temp-bars"`}},
		{"greedy-and-sampling/top-k-and-top-p", []string{`data-testid="stage-funnel"`, `data-testid="lesson-draw"`}},
		{"greedy-and-sampling/checkpoint-defaults", []string{`data-testid="options-sources"`, `data-option="do_sample" data-source="default"`}},
		{"greedy-and-sampling/your-settings-win", []string{`data-option="do_sample" data-source="user"`}},
		{"batches-and-padding/why-pad", []string{`data-testid="attention-mask"`}},
		{"batches-and-padding/left-or-right", []string{`data-testid="rows-at-step"`}},
		{"memory-bound/bytes-per-token", []string{`data-testid="model-weights"`}},
	} {
		for _, lang := range lessons.Languages() {
			t.Run(tc.step+"/"+lang, func(t *testing.T) {
				code, body := get(t, h, "/lessons/"+tc.step+"?lang="+lang)
				if code != 200 {
					t.Fatalf("got status %d, want 200", code)
				}
				for _, w := range tc.want {
					if !strings.Contains(body, w) {
						t.Errorf("the page lacks %s", w)
					}
				}
			})
		}
	}
}

// TestLessonNoRunnableModel serves only a model without a tokenizer: the
// real steps say so and what to download, list the model disabled with its
// reason, and show neither a server path nor --prompt-ids.
func TestLessonNoRunnableModel(t *testing.T) {
	gpt2 := refdata.Need(t, "golden/tiny-gpt2")
	dir := t.TempDir()
	if err := os.Symlink(gpt2, filepath.Join(dir, "tiny-gpt2")); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{ModelsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct{ lang, says string }{
		{"en", "with a tokenizer"},
		{"hi", "tokenizer वाला"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			code, body := get(t, srv.Handler(), "/lessons/kv-cache/same-tokens?lang="+tc.lang)
			i := strings.Index(body, `data-testid="no-real-model"`)
			if code != 200 || i < 0 || !strings.Contains(body[i:], tc.says) {
				t.Errorf("got %d, want 200 with the message saying %q", code, tc.says)
			}
			if !strings.Contains(body, `<option value="tiny-gpt2" disabled>`) {
				t.Errorf("got no disabled tiny-gpt2 in the picker")
			}
			for _, bad := range []string{dir, gpt2, "--prompt-ids"} {
				if strings.Contains(body, bad) {
					t.Errorf("the page holds %q", bad)
				}
			}
		})
	}
}
