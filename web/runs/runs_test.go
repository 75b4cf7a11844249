package runs

import (
	"net/url"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/remote"
	"tracer/trace"
)

func TestTotalVariation(t *testing.T) {
	row := func(ids []int, probs []float64) trace.StepRow {
		return trace.StepRow{Final: &trace.Final{KeptCount: len(ids), IDs: ids, Probs: probs}}
	}
	cases := []struct {
		name string
		a, b trace.StepRow
		want float64
	}{
		{"same", row([]int{1, 2}, []float64{0.7, 0.3}), row([]int{1, 2}, []float64{0.7, 0.3}), 0},
		{"disjoint", row([]int{1}, []float64{1}), row([]int{2}, []float64{1}), 1},
		{"shifted", row([]int{1, 2}, []float64{0.9, 0.1}), row([]int{1, 2}, []float64{0.6, 0.4}), 0.3},
		{"raw candidates", trace.StepRow{Candidates: []trace.Candidate{{ID: 1, Prob: 0.5}}}, row([]int{1}, []float64{1}), 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := totalVariation(tc.a, tc.b); got < tc.want-1e-9 || got > tc.want+1e-9 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
func TestServerLacks(t *testing.T) {
	k, p, yes, no := 5, 0.1, true, false
	two := 2
	for _, tc := range []struct {
		name   string
		set    engine.Settings
		engine string
		says   string
	}{
		{"nothing set", engine.Settings{}, remote.EngineOpenAI, ""},
		{"top_k on vLLM", engine.Settings{TopK: &k}, remote.EngineVLLM, ""},
		{"top_k on plain OpenAI", engine.Settings{TopK: &k}, remote.EngineOpenAI, "top_k: this server (openai) speaks the plain OpenAI API"},
		{"min_p on Ollama", engine.Settings{MinP: &p}, remote.EngineOllama, "min_p: this server (ollama)"},
		{"beams", engine.Settings{NumBeams: &two}, remote.EngineLlamaCpp, "no beam search"},
		{"cache on", engine.Settings{UseCache: &yes}, remote.EngineLlamaCpp, ""},
		{"cache off", engine.Settings{UseCache: &no}, remote.EngineLlamaCpp, "cannot turn it off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serverLacks(&tc.set, tc.engine)
			if (tc.says == "") != (got == "") || !strings.Contains(got, tc.says) {
				t.Errorf("got %q, want %q", got, tc.says)
			}
		})
	}
}

func TestCheckID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		id, vocab int
		says      string // "" for no error
	}{
		{"inside", 7, 8, ""},
		{"past the end", 8, 8, "token id 8 is outside the vocabulary (0..7)"},
		{"negative", -1, 8, "token id -1 is negative: ids count from 0"},
		{"unknown vocabulary: the server checks", 5_000_000, unknownVocab, ""},
		{"unknown vocabulary, negative", -3, unknownVocab, "token id -3 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkID(tc.id, tc.vocab)
			switch {
			case tc.says == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
				t.Errorf("got %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

// TestLinkForm checks what a deep link may carry.
func TestLinkForm(t *testing.T) {
	for _, tc := range []struct {
		name, query, err string
	}{
		{"plain", "model=toy&seed=7&step=2", ""},
		{"unknown", "model=toy&temprature=0.7", "unknown setting temprature"},
		{"twice", "model=toy&seed=1&seed=2", "seed is given 2 times"},
		{"bad-step", "model=toy&step=-1", `step "-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			_, _, err := LinkForm(q)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %v, want an error saying %q", err, tc.err)
			}
		})
	}
}

// FuzzLinkForm reads arbitrary deep-link queries: no panic, and what it
// accepts is exactly what the query says.
func FuzzLinkForm(f *testing.F) {
	for _, s := range []string{
		"model=toy",
		"model=stories260K%2Fstories260K.bin&prompt=Once+upon&seed=7&max_new_tokens=5&step=3&lang=hi",
		"model=m&variants=greedy%0AT%3D0.7&seed=1",
		"model=toy&colour=red",
		"model=toy&seed=1&seed=2",
		"model=toy&step=-1",
		"%zz&model",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		form, step, err := LinkForm(q)
		if err != nil {
			return
		}
		if step < 0 {
			t.Errorf("got step %d, want 0 or more", step)
		}
		for name, got := range map[string]string{
			"model": form.Model, "prompt": form.Prompt, "seed": form.Seed, "temperature": form.Temperature,
			"variants": form.Variants, "use_cache": form.UseCache, "padding": form.Padding,
		} {
			if want := q.Get(name); got != want {
				t.Errorf("%s: got %q, want %q", name, got, want)
			}
		}
	})
}
func TestKeepCacheIsBounded(t *testing.T) {
	r := NewRun(1, &trace.Trace{}, "")
	for id := range maxCaches + 3 {
		r.keepCache(id, nil)
	}
	if len(r.Caches) != maxCaches {
		t.Errorf("got %d caches, want %d", len(r.Caches), maxCaches)
	}
	if _, ok := r.Caches[0]; !ok {
		t.Error("the trunk's cache was dropped")
	}
	if _, ok := r.Caches[maxCaches+2]; !ok {
		t.Error("the newest branch's cache was dropped")
	}
}
func TestRunFileName(t *testing.T) {
	cases := []struct {
		label string
		i     int
		want  string
	}{
		{"greedy", 0, "run-1-greedy.json"},
		{"T=0.7 top_k=5", 1, "run-2-T=0.7-top_k=5.json"},
		{`"quoted"/..\path`, 2, "run-3-quoted--..-path.json"},
		{"", 3, "run-4.json"},
		{"नमस्ते", 4, "run-5.json"},
		{strings.Repeat("x", 100), 5, "run-6-" + strings.Repeat("x", 40) + ".json"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := RunFileName(tc.i, tc.label); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
