// Package toy is the bigram table from the lesson as a model: the next word
// depends only on the last word, through a table of probabilities. It
// implements engine.Model and tokenizer.Tokenizer, so the toy runs through
// the same generation loop as a real transformer.
//
// The table of the lesson:
//
//	<s>  -> I 0.9, you 0.1
//	I    -> love 0.7, eat 0.3
//	love -> chai 0.6, </s> 0.4
//	chai -> </s> 0.8, too 0.2
//
// Its logits are the log-probabilities of the last word's row, with every
// unlisted word at minus infinity, so softmax gives back the table's
// probabilities and greedy decoding picks the row's most probable word.
package toy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"tracer/engine"
	"tracer/engine/tokenizer"
	"tracer/trace"
)

// Table is a bigram table: for each word, the probabilities of the next.
type Table struct {
	Name      string
	BOS, EOS  string // the begin and end markers
	MaxLength int    // the cap on the token list, markers included
	Words     []string
	Rows      map[string][]Entry // in the order the file lists them
}

// Entry is one cell of the table.
type Entry struct {
	Word string
	P    float64
}

// Lesson returns the table of the lesson.
func Lesson() *Table {
	t, err := Parse(strings.NewReader(lessonJSON))
	if err != nil {
		panic("toy: the built-in table is broken: " + err.Error())
	}
	return t
}

const lessonJSON = `{
  "name": "toy bigram (the lesson's table)",
  "bos": "<s>", "eos": "</s>", "max_length": 6,
  "table": {
    "<s>":  {"I": 0.9, "you": 0.1},
    "I":    {"love": 0.7, "eat": 0.3},
    "love": {"chai": 0.6, "</s>": 0.4},
    "chai": {"</s>": 0.8, "too": 0.2}
  }
}`

// MaxFileSize is the largest table file Load reads.
const MaxFileSize = 1 << 20

// Load reads a table from a JSON file (see Parse for the layout).
func Load(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("toy: %w", err)
	}
	defer f.Close()
	t, err := Parse(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("toy: %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a table:
//
//	{"name": "...", "bos": "<s>", "eos": "</s>", "max_length": 6,
//	 "table": {"<s>": {"I": 0.9, "you": 0.1}, ...}}
//
// Words are numbered in the order they first appear, after the two markers
// (ids 0 and 1). Probabilities must be positive; a row need not sum to one
// (its softmax normalises it).
func Parse(r io.Reader) (*Table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("table is larger than %d bytes", MaxFileSize)
	}
	var head struct {
		Name      string          `json:"name"`
		BOS       string          `json:"bos"`
		EOS       string          `json:"eos"`
		MaxLength int             `json:"max_length"`
		Table     json.RawMessage `json:"table"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a toy table: %w", err)
	}
	t := &Table{Name: head.Name, BOS: head.BOS, EOS: head.EOS, MaxLength: head.MaxLength, Rows: map[string][]Entry{}}
	if t.BOS == "" {
		t.BOS = "<s>"
	}
	if t.EOS == "" {
		t.EOS = "</s>"
	}
	if t.BOS == t.EOS {
		return nil, fmt.Errorf("bos and eos are both %q: they must differ", t.BOS)
	}
	if t.MaxLength == 0 {
		t.MaxLength = 6
	}
	if t.MaxLength < 2 {
		return nil, fmt.Errorf("max_length %d is too small: the list starts with the begin marker", t.MaxLength)
	}
	if t.Name == "" {
		t.Name = "toy bigram"
	}
	if len(head.Table) == 0 {
		return nil, errors.New(`missing "table": want {"word": {"next": probability, ...}, ...}`)
	}
	rows, err := orderedObject(head.Table)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			t.Words = append(t.Words, w)
		}
	}
	add(t.BOS)
	add(t.EOS)
	for _, row := range rows {
		if row.key == "" || strings.ContainsAny(row.key, " \t\n") {
			return nil, fmt.Errorf("table: word %q: words must be non-empty and contain no spaces", row.key)
		}
		cells, err := orderedObject(row.value)
		if err != nil {
			return nil, fmt.Errorf("table: row %q: %w", row.key, err)
		}
		if len(cells) == 0 {
			return nil, fmt.Errorf("table: row %q is empty", row.key)
		}
		add(row.key)
		for _, c := range cells {
			var p float64
			if err := json.Unmarshal(c.value, &p); err != nil || !(p > 0) || math.IsInf(p, 0) {
				return nil, fmt.Errorf("table: row %q, word %q: want a positive probability, got %s", row.key, c.key, c.value)
			}
			if c.key == "" || strings.ContainsAny(c.key, " \t\n") {
				return nil, fmt.Errorf("table: row %q: word %q: words must be non-empty and contain no spaces", row.key, c.key)
			}
			add(c.key)
			t.Rows[row.key] = append(t.Rows[row.key], Entry{Word: c.key, P: p})
		}
	}
	if len(t.Words) > 10000 {
		return nil, fmt.Errorf("table has %d words: at most 10000", len(t.Words))
	}
	return t, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object keeping its members' order.
func orderedObject(data json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, got %.40s", data)
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("%q appears twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	return out, nil
}

// Model is a table ready to run; it is both the engine.Model and the
// tokenizer.Tokenizer of the toy.
type Model struct {
	t    *Table
	ids  map[string]int
	rows [][]cell // [words][cells of the row]: nil for words without a row
}

// cell is one listed successor of a word: its id and log-probability. A
// row keeps only its listed cells (every other word is at −inf), so a
// table's model takes memory in proportion to its file, not words².
type cell struct {
	id   int
	logp float32
}

// New makes a model of a table.
func New(t *Table) *Model {
	m := &Model{t: t, ids: map[string]int{}, rows: make([][]cell, len(t.Words))}
	for i, w := range t.Words {
		m.ids[w] = i
	}
	for w, row := range t.Rows {
		cells := make([]cell, len(row))
		for i, e := range row {
			cells[i] = cell{m.ids[e.Word], float32(math.Log(e.P))}
		}
		m.rows[m.ids[w]] = cells
	}
	return m
}

// Table returns the model's table.
func (m *Model) Table() *Table { return m.t }

// GenerationConfig is the toy's own setting: the cap on the list's length.
func (m *Model) GenerationConfig() *engine.Settings {
	n := m.t.MaxLength
	return &engine.Settings{MaxLength: &n}
}

// ID returns the id of a word, or -1.
func (m *Model) ID(word string) int {
	if id, ok := m.ids[word]; ok {
		return id
	}
	return -1
}

// Info describes the toy.
func (m *Model) Info() engine.Info {
	return engine.Info{
		Name: m.t.Name, Kind: "toy", Architecture: "bigram", VocabSize: len(m.t.Words),
		BOS: 0, EOS: []int{1}, PAD: -1,
	}
}

// cache is the toy's "KV cache": just the context of each row.
type cache struct {
	rows [][]int // [rows][len]
}

func (c *cache) Len() int            { return len(c.rows[0]) }
func (c *cache) Rows() int           { return len(c.rows) }
func (c *cache) LayerBytes() []int64 { return nil }
func (c *cache) Truncate(n int) {
	for i := range c.rows {
		c.rows[i] = c.rows[i][:n]
	}
}
func (c *cache) Reorder(src []int) {
	old := c.Clone().(*cache)
	for i, s := range src {
		c.rows[i] = append(c.rows[i][:0], old.rows[s]...)
	}
}
func (c *cache) Clone() engine.Cache {
	n := &cache{rows: make([][]int, len(c.rows))}
	for i, r := range c.rows {
		n.rows[i] = append([]int{}, r...)
	}
	return n
}

// NewCache returns an empty context for rows rows.
func (m *Model) NewCache(rows, capacity int) (engine.Cache, error) {
	c := &cache{rows: make([][]int, rows)}
	for i := range c.rows {
		c.rows[i] = make([]int, 0, capacity)
	}
	return c, nil
}

// Forward appends the new tokens to each row's context and writes the
// log-probabilities of the last real word's row.
func (m *Model) Forward(ec engine.Cache, b *engine.Batch, logits [][]float32) error {
	c := ec.(*cache)
	for r, toks := range b.Tokens {
		c.rows[r] = append(c.rows[r], toks...)
		last := -1
		for i := len(c.rows[r]) - 1; i >= 0; i-- {
			if b.Mask[r][i] {
				last = c.rows[r][i]
				break
			}
		}
		if last < 0 || last >= len(m.rows) || m.rows[last] == nil {
			word := "(nothing)"
			if last >= 0 && last < len(m.t.Words) {
				word = m.t.Words[last]
			}
			return &engine.StopError{Reason: trace.StopNoRow, Msg: fmt.Sprintf("the table has no row for %q: the toy cannot predict what follows it", word)}
		}
		l := logits[r]
		for i := range l {
			l[i] = float32(math.Inf(-1))
		}
		for _, c := range m.rows[last] {
			l[c.id] = c.logp
		}
	}
	return nil
}

// Cost is zero: a table lookup moves no weights.
func (m *Model) Cost(rows, past, n int) trace.Traffic { return trace.Traffic{} }

// Encode splits text on spaces into words of the table; addSpecial
// prepends the begin marker.
func (m *Model) Encode(text string, addSpecial bool) ([]int, error) {
	var ids []int
	if addSpecial {
		ids = append(ids, 0)
	}
	for _, w := range strings.Fields(text) {
		id, ok := m.ids[w]
		if !ok {
			return nil, fmt.Errorf("toy: %q is not a word of the table (%s)", w, strings.Join(m.t.Words, " "))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Decode joins the words with spaces; skipSpecial drops the markers.
func (m *Model) Decode(ids []int, skipSpecial bool) (string, error) {
	words := make([]string, 0, len(ids))
	for _, id := range ids {
		if id < 0 || id >= len(m.t.Words) {
			return "", fmt.Errorf("toy: id %d is outside the vocabulary (0..%d)", id, len(m.t.Words)-1)
		}
		if skipSpecial && m.IsSpecial(id) {
			continue
		}
		words = append(words, m.t.Words[id])
	}
	return strings.Join(words, " "), nil
}

// Token returns the word of id.
func (m *Model) Token(id int) string {
	if id < 0 || id >= len(m.t.Words) {
		return ""
	}
	return m.t.Words[id]
}

// TokenBytes returns the word's bytes.
func (m *Model) TokenBytes(id int) []byte {
	if id < 0 || id >= len(m.t.Words) {
		return nil
	}
	return []byte(m.t.Words[id])
}

// VocabSize is the number of words, markers included.
func (m *Model) VocabSize() int { return len(m.t.Words) }

// Specials: the begin marker is BOS, the end marker EOS.
func (m *Model) Specials() tokenizer.Specials {
	return tokenizer.Specials{BOS: 0, EOS: 1, PAD: -1, UNK: -1}
}

// IsSpecial reports whether id is one of the markers.
func (m *Model) IsSpecial(id int) bool { return id == 0 || id == 1 }
