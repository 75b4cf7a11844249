package toy_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/toy"
)

// bigTable is a table file just under the size limit with 10,000 words and
// 5,000 rows of one cell each.
func bigTable() []byte {
	var b bytes.Buffer
	b.WriteString(`{"name": "big", "table": {"<s>": {"w0": 1}`)
	for i := 0; i < 4999; i++ {
		fmt.Fprintf(&b, `, "w%d": {"w%d": 1}`, i, 5000+i)
	}
	b.WriteString(`, "w9997": {"</s>": 1}}}`)
	return b.Bytes()
}

// TestModelMemoryFollowsTheFile checks that a table's model takes memory in
// proportion to its file: a dense words × words matrix for this table would
// take 200 MB.
func TestModelMemoryFollowsTheFile(t *testing.T) {
	file := bigTable()
	tab, err := toy.Parse(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := toy.New(tab)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 20*uint64(len(file)) {
		t.Errorf("New allocated %d bytes for a %d-byte table with %d words; want at most 20× the file", grew, len(file), m.VocabSize())
	}
	tr := generateFrom(t, m, "w0", false)
	if got := tr; got != "w0 w5000" {
		t.Errorf("greedy from w0: got %q, want %q", got, "w0 w5000")
	}
}

// generateFrom runs the model from a prompt and returns the words of the
// run (the prompt's last word and what follows), or "" when it stops with
// an error.
func generateFrom(t *testing.T, m *toy.Model, prompt string, sample bool) string {
	t.Helper()
	ids, err := m.Encode(prompt, true)
	if err != nil {
		return ""
	}
	maxNew, seed := 4, uint64(1)
	opts, notices, err := engine.Resolve(m.Info(), m.GenerationConfig(), &engine.Settings{DoSample: &sample, MaxNewTokens: &maxNew, Seed: &seed})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	tr, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: [][]int{ids}, Options: opts, Notices: notices, Record: true,
	})
	if err != nil {
		return ""
	}
	for _, id := range tr.Output.NewIDs {
		if id < 0 || id >= m.VocabSize() {
			t.Fatalf("generated id %d outside the vocabulary of %d", id, m.VocabSize())
		}
	}
	words := []string{m.Token(ids[len(ids)-1])}
	for _, id := range tr.Output.NewIDs {
		if id != 1 {
			words = append(words, m.Token(id))
		}
	}
	return strings.Join(words, " ")
}

// FuzzParse reads arbitrary table files: a table or a clear error, never a
// panic; a table that parses runs greedy and sampled without a panic and
// generates only its own words.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"table": {"<s>": {"I": 0.9, "you": 0.1}, "I": {"love": 1}}}`))
	f.Add([]byte(`{"name": "x", "bos": "a", "eos": "b", "max_length": 3, "table": {"a": {"c": 1e-300}, "c": {"b": 1e300}}}`))
	f.Add([]byte(`{"bos": "x", "eos": "x", "table": {}}`))
	f.Add([]byte(`{"table": {"<s>": {"a": 5e-324, "b": 1.7976931348623157e308}}}`))
	f.Add([]byte(`{"table": {"<s>": {"a": -1}}}`))
	f.Add([]byte(`{"max_length": 1000000000, "table": {"<s>": {"<s>": 1}}}`))
	f.Add([]byte(`{"table": {"<s>": {"\u001b[2J": 1}, "\u001b[2J": {"</s>": 1}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := toy.Parse(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		m := toy.New(tab)
		for _, sample := range []bool{false, true} {
			generateFrom(t, m, tab.BOS, sample)
		}
	})
}
