package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// DefaultMaxSize is the largest trace Read accepts unless told otherwise.
const DefaultMaxSize = 64 << 20

// ErrTooLarge is returned for input over the size limit.
var ErrTooLarge = errors.New("trace is larger than the size limit")

// Read reads and validates one trace of at most maxSize bytes (DefaultMaxSize
// when maxSize <= 0). Foreign or malformed input gets an error that says
// what is wrong; Read never panics.
func Read(r io.Reader, maxSize int64) (*Trace, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	data, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("trace: %w (%d MiB)", ErrTooLarge, maxSize>>20)
	}
	return Decode(data)
}

// Decode parses and validates a trace held in memory.
func Decode(data []byte) (*Trace, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("trace: empty input: not a tracer trace")
	}
	if data[0] == '<' {
		var err error
		if data, err = FromHTML(data); err != nil {
			return nil, err
		}
	}
	if data[0] != '{' {
		return nil, errors.New("trace: bad file format: not a tracer trace (want a JSON object)")
	}
	var head struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("trace: malformed JSON: %w", describe(data, err))
	}
	switch {
	case head.Format == nil:
		return nil, errors.New(`trace: bad file format: no "format" field: not a tracer trace?`)
	case *head.Format != Format:
		return nil, fmt.Errorf("trace: bad file format %q: this tracer reads %q", *head.Format, Format)
	}
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("trace: %w", describe(data, err))
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

// describe adds the line and column to a JSON error.
func describe(data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input" {
		return errors.New("truncated JSON: the input ends in the middle of the trace")
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// Validate checks a trace's consistency: ids inside the vocabulary,
// probabilities in [0, 1], steps in order, a known stop reason, and an
// output that agrees with the prompt.
func (t *Trace) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("trace: invalid: "+format, args...)
	}
	if t.Format != Format {
		return bad("format %q, want %q", t.Format, Format)
	}
	v := t.Model.VocabSize
	src := t.Model.Source
	if err := src.validate(bad); err != nil {
		return err
	}
	// A server may not say how large its vocabulary is (0), nor give ids (-1).
	if v < 0 || (v == 0 && src == nil) {
		return bad("model.vocab_size is %d: want a positive vocabulary size", v)
	}
	inVocab := func(what string, id int) error {
		if id == -1 && src != nil && !src.TokenIDs {
			return nil
		}
		if id < 0 || (v > 0 && id >= v) {
			return bad("%s: token id %d is outside the vocabulary (0..%d)", what, id, v-1)
		}
		return nil
	}
	prob := func(what string, p float64) error {
		if math.IsNaN(p) || p < 0 || p > 1+1e-6 {
			return bad("%s: probability %v is outside [0, 1]", what, p)
		}
		return nil
	}
	for i, id := range t.Prompt.IDs {
		if err := inVocab(fmt.Sprintf("prompt.ids[%d]", i), id); err != nil {
			return err
		}
	}
	for i, id := range t.Model.EOS {
		if err := inVocab(fmt.Sprintf("model.eos_token_id[%d]", i), id); err != nil {
			return err
		}
	}
	if err := t.validateSteps("steps", t.Steps, 0, inVocab, prob, bad); err != nil {
		return err
	}
	if err := t.validateOutput("output", t.Output, inVocab, bad); err != nil {
		return err
	}
	// Branches form a tree: each leaves an earlier branch (or the trunk, 0)
	// at a step that branch has.
	ends := map[int]int{0: len(t.Steps)} // branch id -> one past its last step
	for i, b := range t.Branches {
		at := fmt.Sprintf("branches[%d]", i)
		if b.ID != i+1 {
			return bad("%s has id %d: branches must be numbered 1, 2, 3, ...", at, b.ID)
		}
		end, ok := ends[b.Parent]
		if !ok || b.Parent >= b.ID {
			return bad("%s leaves branch %d, which does not come before it", at, b.Parent)
		}
		if b.At < 0 || b.At >= end {
			return bad("%s leaves branch %d at step %d, which that branch does not have", at, b.Parent, b.At)
		}
		if len(b.Steps) > 0 && b.Steps[0].Index != b.At {
			return bad("%s.steps start at index %d, want its branch point %d", at, b.Steps[0].Index, b.At)
		}
		if err := t.validateSteps(at+".steps", b.Steps, b.At, inVocab, prob, bad); err != nil {
			return err
		}
		if err := t.validateOutput(at+".output", b.Output, inVocab, bad); err != nil {
			return err
		}
		ends[b.ID] = b.At + len(b.Steps)
	}
	return nil
}

type (
	idCheck   func(what string, id int) error
	probCheck func(what string, p float64) error
	badFunc   func(format string, args ...any) error
)

// validateSteps checks steps numbered from first on.
func (t *Trace) validateSteps(name string, steps []Step, first int, inVocab idCheck, prob probCheck, bad badFunc) error {
	v := t.Model.VocabSize
	for i, s := range steps {
		if s.Index != first+i {
			return bad("%s[%d] has index %d: steps must be numbered %d, %d, ...", name, i, s.Index, first, first+1)
		}
		if len(s.Rows) == 0 {
			return bad("steps[%d] has no rows", i)
		}
		for j, r := range s.Rows {
			at := fmt.Sprintf("%s[%d].rows[%d]", name, i, j)
			if err := inVocab(at+".chosen", r.Chosen.ID); err != nil {
				return err
			}
			switch r.Chosen.By {
			case ByGreedy, BySample, ByBeam, ByForced:
			default:
				return bad("%s.chosen.by is %q: want greedy, sample, beam or forced", at, r.Chosen.By)
			}
			if err := prob(at+".chosen", r.Chosen.Prob); err != nil {
				return err
			}
			for k, c := range r.Candidates {
				if err := inVocab(fmt.Sprintf("%s.candidates[%d]", at, k), c.ID); err != nil {
					return err
				}
				if err := prob(fmt.Sprintf("%s.candidates[%d]", at, k), c.Prob); err != nil {
					return err
				}
				if k > 0 && c.Prob > r.Candidates[k-1].Prob+1e-9 {
					return bad("%s.candidates are not ordered by probability", at)
				}
			}
			for _, id := range r.InputIDs {
				if err := inVocab(at+".input_ids", id); err != nil {
					return err
				}
			}
			if f := r.Final; f != nil {
				if len(f.IDs) != len(f.Probs) {
					return bad("%s.final has %d ids but %d probs", at, len(f.IDs), len(f.Probs))
				}
				for k, id := range f.IDs {
					if err := inVocab(fmt.Sprintf("%s.final.ids[%d]", at, k), id); err != nil {
						return err
					}
					if err := prob(fmt.Sprintf("%s.final.probs[%d]", at, k), f.Probs[k]); err != nil {
						return err
					}
				}
			}
			if d := r.Draw; d != nil && (d.U < 0 || d.U >= 1) {
				return bad("%s.draw.u is %v: want a number in [0, 1)", at, d.U)
			}
			if len(r.Logits) != 0 && len(r.Logits) != v {
				return bad("%s.logits has %d values, want the vocabulary size %d", at, len(r.Logits), v)
			}
			if r.Inside != nil {
				if err := t.validateInside(at+".inside", s.Index, r, inVocab, prob, bad); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// weightsSumSlack is how far from 1 a recorded attention row may sum:
// float32 softmax weights over thousands of keys sum to 1 within about
// 1e-6, so a larger gap means the row is not a distribution.
const weightsSumSlack = 1e-3

// validateInside checks a row's inside view: one attention list or lens
// per layer and one list per head (when the model says how many), each
// attention row as long as the row's context (prompt rows: as many as the
// tokens fed) holding probabilities that sum to 1, prompt attention only
// at step 0, and lens entries inside the vocabulary, by descending logit.
func (t *Trace) validateInside(at string, step int, r StepRow, inVocab idCheck, prob probCheck, bad badFunc) error {
	in := r.Inside
	layers, heads := t.Model.Layers, t.Model.Heads
	// count checks a list against the model's layers or heads (when the
	// model says how many); an absent part (0 layers) was not recorded.
	count := func(what string, got, want int, unit string) error {
		if (got > 0 || unit == "heads") && want > 0 && got != want {
			return bad("%s has %d entries, want one per model.%s (%d)", what, got, unit, want)
		}
		return nil
	}
	row := func(what string, w Weights, keys int) error {
		if len(w) != keys {
			return bad("%s has %d weights, want %d (one per position the row holds)", what, len(w), keys)
		}
		var sum float64
		for k, p := range w {
			if err := prob(fmt.Sprintf("%s[%d]", what, k), float64(p)); err != nil {
				return err
			}
			sum += float64(p)
		}
		if math.Abs(sum-1) > weightsSumSlack {
			return bad("%s sums to %v: attention weights must sum to 1", what, sum)
		}
		return nil
	}
	if err := count(at+".attention", len(in.Attention), layers, "layers"); err != nil {
		return err
	}
	for l, hs := range in.Attention {
		if err := count(fmt.Sprintf("%s.attention[%d]", at, l), len(hs), heads, "heads"); err != nil {
			return err
		}
		for h, w := range hs {
			if err := row(fmt.Sprintf("%s.attention[%d][%d]", at, l, h), w, r.Context); err != nil {
				return err
			}
		}
	}
	if len(in.PromptAttention) > 0 && step != 0 {
		return bad("%s.prompt_attention is recorded at step %d: it belongs to step 0 only", at, step)
	}
	if err := count(at+".prompt_attention", len(in.PromptAttention), layers, "layers"); err != nil {
		return err
	}
	for l, hs := range in.PromptAttention {
		if err := count(fmt.Sprintf("%s.prompt_attention[%d]", at, l), len(hs), heads, "heads"); err != nil {
			return err
		}
		for h, qs := range hs {
			if len(qs) != len(r.InputIDs) {
				return bad("%s.prompt_attention[%d][%d] has %d queries, want one per input id (%d)", at, l, h, len(qs), len(r.InputIDs))
			}
			for q, w := range qs {
				if err := row(fmt.Sprintf("%s.prompt_attention[%d][%d][%d]", at, l, h, q), w, len(r.InputIDs)); err != nil {
					return err
				}
			}
		}
	}
	if err := count(at+".lens", len(in.Lens), layers, "layers"); err != nil {
		return err
	}
	for l, cs := range in.Lens {
		for k, c := range cs {
			what := fmt.Sprintf("%s.lens[%d][%d]", at, l, k)
			if err := inVocab(what, c.ID); err != nil {
				return err
			}
			if err := prob(what, c.Prob); err != nil {
				return err
			}
			if c.Logit != c.Logit || math.IsInf(float64(c.Logit), 0) {
				return bad("%s.logit is not a finite number", what)
			}
			if k > 0 && c.Logit > cs[k-1].Logit {
				return bad("%s.lens[%d] is not ordered by descending logit", at, l)
			}
		}
	}
	if in.Forward != nil {
		return t.validateForward(at+".forward", in.Forward, bad)
	}
	return nil
}

// validateForward checks a row's forward pass: one entry per model layer
// (when the model says how many), norms that are finite and not negative,
// byte counts not negative, and heads and neurons inside the model (when
// it says how many), no more than record_forward asked for, each once, by
// descending share and |activation|.
func (t *Trace) validateForward(at string, f *Forward, bad badFunc) error {
	norm := func(what string, v float64) error {
		if !(v >= 0) || math.IsInf(v, 0) {
			return bad("%s is %v: want a norm, a finite number of 0 or more", what, v)
		}
		return nil
	}
	bytes := func(what string, v int64) error {
		if v < 0 {
			return bad("%s is %d: want a byte count of 0 or more", what, v)
		}
		return nil
	}
	if layers := t.Model.Layers; layers > 0 && len(f.Layers) != layers {
		return bad("%s.layers has %d entries, want one per model.layers (%d)", at, len(f.Layers), layers)
	}
	if err := firstErr(norm(at+".embedding", f.Embedding), norm(at+".final", f.Final),
		bytes(at+".embed_bytes", f.EmbedBytes), bytes(at+".unembed_bytes", f.UnembedBytes)); err != nil {
		return err
	}
	width, most := t.Model.Intermediate, t.Options.RecordForward
	for l, fl := range f.Layers {
		where := fmt.Sprintf("%s.layers[%d]", at, l)
		if err := firstErr(norm(where+".in", fl.In), norm(where+".attn", fl.Attn), norm(where+".mid", fl.Mid),
			norm(where+".mlp", fl.MLP), norm(where+".out", fl.Out),
			bytes(where+".attn_bytes", fl.AttnBytes), bytes(where+".mlp_bytes", fl.MLPBytes)); err != nil {
			return err
		}
		heads := t.Model.Heads
		for k, h := range fl.Heads {
			what := fmt.Sprintf("%s.heads[%d]", where, k)
			if err := norm(what+".share", h.Share); err != nil {
				return err
			}
			if h.Index < 0 || heads > 0 && h.Index >= heads {
				return bad("%s.index %d is not a head of the model (0..%d)", what, h.Index, heads-1)
			}
		}
		for k, n := range fl.Neurons {
			what := fmt.Sprintf("%s.neurons[%d]", where, k)
			switch {
			case n.Index < 0 || width > 0 && n.Index >= width:
				return bad("%s.index %d is outside the MLP (0..%d)", what, n.Index, width-1)
			case n.Act != n.Act || math.IsInf(float64(n.Act), 0):
				return bad("%s.act is not a finite number", what)
			}
		}
		if err := firstErr(
			checkKept(where, "heads", "share", most, len(fl.Heads), func(k int) (int, float64) { return fl.Heads[k].Index, fl.Heads[k].Share }, bad),
			checkKept(where, "neurons", "|act|", most, len(fl.Neurons), func(k int) (int, float64) { return fl.Neurons[k].Index, float64(abs32(fl.Neurons[k].Act)) }, bad),
		); err != nil {
			return err
		}
	}
	return nil
}

// checkKept checks the n heads or neurons (list) a forward layer at where
// kept: at most most (record_forward), each index once, in descending
// order of the key entry(k) returns with it.
func checkKept(where, list, key string, most, n int, entry func(k int) (index int, key float64), bad badFunc) error {
	if most > 0 && n > most {
		return bad("%s.%s has %d entries, more than options.record_forward (%d)", where, list, n, most)
	}
	for k := range n {
		i, v := entry(k)
		if k > 0 {
			if _, prev := entry(k - 1); v > prev {
				return bad("%s.%s is not ordered by descending %s", where, list, key)
			}
		}
		for o := range k {
			if j, _ := entry(o); j == i {
				return bad("%s.%s[%d].index %d is listed twice", where, list, k, i)
			}
		}
	}
	return nil
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// firstErr returns the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// validateOutput checks an output: a known stop reason, ids in the
// vocabulary, and ids that are the prompt followed by the new ids.
func (t *Trace) validateOutput(name string, o Output, inVocab idCheck, bad badFunc) error {
	if !slices.Contains(StopReasons(), o.StopReason) {
		return bad("%s.stop_reason is %q: want eos, max_new_tokens, max_length, stop_string, no_row, cancelled or nan", name, o.StopReason)
	}
	if n := o.NaN; n != nil {
		if !slices.Contains([]string{NaNEmbedding, NaNLayer, NaNHead, NaNLogits, NaNStage, NaNNoMass}, n.Where) {
			return bad("%s.nan.where is %q: want embedding, layer, head, logits, processors or no_mass", name, n.Where)
		}
		if n.Step < 0 || n.Row < 0 || n.Layer < -1 || (n.Where == NaNLayer) != (n.Layer >= 0) {
			return bad("%s.nan is step %d, row %d, layer %d: want a step and row of 0 or more, and a layer of 0 or more exactly when where is \"layer\"", name, n.Step, n.Row, n.Layer)
		}
	}
	for i, id := range o.IDs {
		if err := inVocab(fmt.Sprintf("%s.ids[%d]", name, i), id); err != nil {
			return err
		}
	}
	for i, id := range o.NewIDs {
		if err := inVocab(fmt.Sprintf("%s.new_ids[%d]", name, i), id); err != nil {
			return err
		}
	}
	for i, row := range o.Sequences {
		for _, id := range row {
			if err := inVocab(fmt.Sprintf("%s.sequences[%d]", name, i), id); err != nil {
				return err
			}
		}
	}
	if len(o.IDs) > 0 {
		if len(o.IDs) != len(t.Prompt.IDs)+len(o.NewIDs) || !slices.Equal(o.IDs[:len(t.Prompt.IDs)], t.Prompt.IDs) || !slices.Equal(o.IDs[len(t.Prompt.IDs):], o.NewIDs) {
			return bad("%s.ids must be prompt.ids followed by %s.new_ids", name, name)
		}
	}
	return nil
}

// Write writes t as JSON laid out for reading and for size: the members of
// the top level and of its objects one per line, each step (and each
// branch) compact on a line of its own, and a newline at the end.
func Write(w io.Writer, t *Trace) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	b := make([]byte, 0, len(data)+len(data)/32+1)
	b = append(indentShallow(b, data, 2), '\n')
	_, err = w.Write(b)
	return err
}

// indentShallow appends compact JSON src to dst, breaking the lines of
// objects and arrays nested at most depth deep (the top level is 1) after
// each member and element, indented by one space per level; deeper
// values stay compact.
func indentShallow(dst, src []byte, depth int) []byte {
	level, inString, escaped := 0, false, false
	newline := func(n int) {
		dst = append(dst, '\n')
		for range n {
			dst = append(dst, ' ')
		}
	}
	for i, c := range src {
		if inString {
			dst = append(dst, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			dst = append(dst, c)
		case '{', '[':
			dst = append(dst, c)
			level++
			if level <= depth && i+1 < len(src) && src[i+1] != '}' && src[i+1] != ']' {
				newline(level)
			}
		case '}', ']':
			if level <= depth && i > 0 && src[i-1] != '{' && src[i-1] != '[' {
				newline(level - 1)
			}
			level--
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			if level <= depth {
				newline(level)
			}
		case ':':
			dst = append(dst, c)
			if level <= depth {
				dst = append(dst, ' ')
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// HTMLMarker opens the element in which an exported HTML file (tracer
// export --html) carries its trace; HTMLEnd closes it. The JSON inside has
// every "<" written as \u003c, so the element cannot end early.
const (
	HTMLMarker = `<script type="application/json" id="tracer-trace">`
	HTMLEnd    = `</script>`
)

// FromHTML returns the trace JSON an exported HTML file carries (the
// first run of a comparison). Decode calls it for input that starts with
// "<", so Read, tracer validate and the page's Import accept the HTML file.
func FromHTML(data []byte) ([]byte, error) {
	i := bytes.Index(data, []byte(HTMLMarker))
	if i < 0 {
		return nil, errors.New("trace: bad file format: an HTML file without an embedded trace: not an HTML file written by tracer export --html?")
	}
	data = data[i+len(HTMLMarker):]
	j := bytes.Index(data, []byte(HTMLEnd))
	if j < 0 {
		return nil, errors.New("trace: the HTML file's embedded trace is cut off (no </script> after it): the file is truncated; export it again")
	}
	data = bytes.TrimSpace(data[:j])
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("trace: the HTML file's embedded trace is empty or not a JSON object: export it again")
	}
	return data, nil
}
