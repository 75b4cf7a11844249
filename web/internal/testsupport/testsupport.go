// Package testsupport holds the fixtures tests of several web packages
// share: the page's words, small models (a looping toy table, a slow
// model, a random Llama), traces recorded from them, and reading a view's
// output text. Only tests import it; it imports nothing of web but
// web/words.
package testsupport

import (
	"bytes"
	"context"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"tracer/engine"
	"tracer/engine/arch"
	"tracer/engine/models"
	"tracer/engine/tensor"
	"tracer/toy"
	"tracer/trace"
	"tracer/web/words"
)

// Words is the page's wording in lang, from the embedded catalog.
func Words(t testing.TB, lang string) words.Words {
	t.Helper()
	book, err := words.Load()
	if err != nil {
		t.Fatal(err)
	}
	return book.In(lang)
}

// RandomModel builds a small random Llama with the given vocabulary (the
// shape of SmolLM2's vocabulary at a fraction of its size elsewhere).
func RandomModel(t testing.TB, vocab int) *models.Loaded {
	t.Helper()
	s := arch.Shape{Arch: "llama", VocabSize: vocab, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 1, Intermediate: 64, MaxPositions: 128, Tied: true}
	m, err := arch.NewRandom("whatif", s, tensor.F32, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &models.Loaded{Spec: "random", Model: m}
}

// ToyJSON runs the toy greedily (the lesson's run) and returns the trace
// as JSON.
func ToyJSON(f testing.TB) []byte {
	f.Helper()
	m, err := models.Open("toy")
	if err != nil {
		f.Fatal(err)
	}
	req, err := m.Request(models.Input{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	req.Record = true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := trace.Write(&b, tr); err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}

// SampledTrace generates n steps from the model, sampled at top-20.
func SampledTrace(tb testing.TB, model string, n int) *trace.Trace {
	tb.Helper()
	m, err := models.Open(model)
	if err != nil {
		tb.Fatal(err)
	}
	sample, temp, seed, minNew := true, 0.9, uint64(7), n
	req, err := m.Request(models.Input{Texts: []string{"Once upon a time"}}, &engine.Settings{
		DoSample: &sample, Temperature: &temp, Seed: &seed, MaxNewTokens: &n, MinNewTokens: &minNew,
	})
	if err != nil {
		tb.Fatal(err)
	}
	req.Record = true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

// ToyTrace is the lesson's greedy run of the toy.
func ToyTrace(t *testing.T) *trace.Trace {
	t.Helper()
	tr, err := trace.Decode(ToyJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// LoopTrace is a greedy run of the loop toy, steps long, as trace JSON. It
// is labelled a llama2.c run so the page shows it step by step, as it would
// a real model's, rather than narrating it as a toy.
func LoopTrace(t testing.TB, steps int) []byte {
	t.Helper()
	m := LoopModel(t, 0)
	n := steps
	no := false
	req, err := m.Request(models.Input{}, &engine.Settings{MaxNewTokens: &n, DoSample: &no})
	if err != nil {
		t.Fatal(err)
	}
	req.Record = true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != steps {
		t.Fatalf("got %d steps, want %d", len(tr.Steps), steps)
	}
	tr.Model.Kind = "llama2c"
	var b bytes.Buffer
	if err := trace.Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// OutputText returns the text of a view's data-testid="output-text"
// element, tags stripped, and whether the element is there.
func OutputText(h string) (string, bool) {
	m := regexp.MustCompile(`(?s)data-testid="output-text">(.*?)</span></p>`).FindStringSubmatch(h)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], "")), true
}

// LoopTable is a toy table that never ends: a learner's stand-in for a
// model that writes on and on.
const LoopTable = `{"name": "loop", "max_length": 1000, "table": {
  "<s>": {"a": 1},
  "a": {"b": 0.6, "c": 0.4},
  "b": {"a": 0.7, "c": 0.3},
  "c": {"a": 0.5, "b": 0.5}}}`

// slowModel is a model whose every forward pass takes a while, so a test
// can step and stop while it generates.
type slowModel struct {
	engine.Model
	delay time.Duration
}

func (m slowModel) Forward(c engine.Cache, b *engine.Batch, logits [][]float32) error {
	time.Sleep(m.delay)
	return m.Model.Forward(c, b, logits)
}

// LoopModel opens loopTable, slowed down by delay per step.
func LoopModel(t testing.TB, delay time.Duration) *models.Loaded {
	t.Helper()
	path := filepath.Join(t.TempDir(), "loop.json")
	if err := os.WriteFile(path, []byte(LoopTable), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := toy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := toy.New(tab)
	return &models.Loaded{Spec: "loop", Model: slowModel{m, delay}, Tokenizer: m, Config: m.GenerationConfig()}
}
