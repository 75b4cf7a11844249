package runs

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/engine/tokenizer"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// The what-if panel: at the current step, the learner moves sliders for
// temperature, top-k, top-p and min-p, and the server re-applies the
// engine's own processors (engine.Pipeline) to the step's raw logits,
// then redraws the candidates, the funnel and the draw with the same
// components the step uses. Nothing is generated again. A live run keeps
// every raw logit for this (see keepLogits); an imported trace uses what
// it recorded: every logit with --full-logits, else its top candidates,
// and the panel says the rest of the vocabulary is missing.

// whatIfTop is how many tokens the what-if's stages and final
// distribution list (the draw's bar and the funnel's rows).
const whatIfTop = 20

// WhatIfForm is the panel's settings as the page sends them; a field left
// out keeps the run's own value.
type WhatIfForm struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopK        *int     `json:"top_k,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MinP        *float64 `json:"min_p,omitempty"`
}

// WhatIfSettings are the four settings the panel moves.
type WhatIfSettings struct {
	Temperature float64 `json:"temperature"`
	TopK        int     `json:"top_k"`
	TopP        float64 `json:"top_p"`
	MinP        float64 `json:"min_p"`
}

// SettingsOf reads the panel's settings from a run's options.
func SettingsOf(o trace.Options) WhatIfSettings {
	return WhatIfSettings{Temperature: cmp.Or(o.Temperature, 1), TopK: o.TopK, TopP: cmp.Or(o.TopP, 1), MinP: o.MinP}
}

// Apply checks the form against the limits the engine accepts and lays it
// over base. vocab bounds top_k.
func (f *WhatIfForm) Apply(base WhatIfSettings, vocab int) (WhatIfSettings, error) {
	s := base
	if f == nil {
		return s, nil
	}
	if v := f.Temperature; v != nil {
		if !(*v > 0 && *v <= 100) {
			return s, fmt.Errorf("what-if: temperature %g is out of range: give a number above 0 and at most 100", *v)
		}
		s.Temperature = *v
	}
	if v := f.TopK; v != nil {
		if *v < 0 || *v > vocab {
			return s, fmt.Errorf("what-if: top_k %d is out of range: give 0 (off) to %d, the vocabulary", *v, vocab)
		}
		s.TopK = *v
	}
	if v := f.TopP; v != nil {
		if !(*v > 0 && *v <= 1) {
			return s, fmt.Errorf("what-if: top_p %g is out of range: give a number above 0 and at most 1 (1 = off)", *v)
		}
		s.TopP = *v
	}
	if v := f.MinP; v != nil {
		if !(*v >= 0 && *v <= 1) {
			return s, fmt.Errorf("what-if: min_p %g is out of range: give 0 (off) to 1", *v)
		}
		s.MinP = *v
	}
	return s, nil
}

// options returns the run's options with the panel's settings, sampling.
func (s WhatIfSettings) options(o trace.Options) trace.Options {
	o.DoSample = true
	o.Temperature, o.TopK, o.TopP, o.MinP = s.Temperature, s.TopK, s.TopP, s.MinP
	return o
}

// label names the settings, for a branch: "T=0.7 top_k=5 top_p=0.9".
func (s WhatIfSettings) label() string {
	parts := []string{"T=" + strconv.FormatFloat(s.Temperature, 'g', 4, 64)}
	if s.TopK > 0 {
		parts = append(parts, "top_k="+strconv.Itoa(s.TopK))
	}
	if s.TopP < 1 {
		parts = append(parts, "top_p="+strconv.FormatFloat(s.TopP, 'g', 4, 64))
	}
	if s.MinP > 0 {
		parts = append(parts, "min_p="+strconv.FormatFloat(s.MinP, 'g', 4, 64))
	}
	return strings.Join(parts, " ")
}

// WhatIfStep is what the what-if needs of the current step, copied under
// the session's lock: steps once appended never change, so it may be
// used after the lock is released.
type WhatIfStep struct {
	T     trace.Trace  // the run's trace, shallow: model, options, prompt
	Steps []trace.Step // the followed path, clipped
	pos   int          // the step
	row   int
	tok   tokenizer.Tokenizer // nil for imported traces or models without one

	// Again recomputes the step's raw logits when its row holds only the
	// top candidates (stepLogits); nil when it cannot. logits is what it
	// gave.
	Again  func() []float32
	Logits []float32
}

// ErrWhatIfHere says why the position shown has nothing to re-sample; the
// panel shows it as a note (in the page's language), not as an error.
type ErrWhatIfHere struct{ Key string }

func (e ErrWhatIfHere) Error() string { return e.Key }

// WhatIfAt finds the step the cursor shows. The caller holds the lock of
// the session that owns d.
func WhatIfAt(d *Document, cur Cursor) (WhatIfStep, error) {
	if d.Compare {
		return WhatIfStep{}, ErrWhatIfHere{words.KeyDbgWhatIfCompare}
	}
	r := d.Runs[0]
	t := r.Trace
	if t.Options.NumBeams > 1 {
		return WhatIfStep{}, ErrWhatIfHere{words.KeyDbgWhatIfBeams}
	}
	steps := slices.Clip(PathSteps(t, cur.Branch))
	pos := cur.Pos
	if d.Walk != nil {
		pos = d.Walk.Moments[min(max(pos, 0), len(d.Walk.Moments)-1)].Step
	}
	if pos < 0 || pos >= len(steps) {
		return WhatIfStep{}, ErrWhatIfHere{words.KeyDbgWhatIfNoStep}
	}
	w := WhatIfStep{T: *t, Steps: steps, pos: pos, row: min(max(cur.Row, 0), len(steps[pos].Rows)-1)}
	w.T.Steps, w.T.Branches = nil, nil
	if r.Model != nil {
		w.tok = r.Model.Tokenizer
	}
	if len(steps[pos].Rows[w.row].Logits) != t.Model.VocabSize {
		w.Again = r.stepLogits(cur.Branch, steps, pos)
	}
	return w, nil
}

// stepLogits returns a function that recomputes the raw logits of step pos
// of a finished single-row run on the path steps of branch, from the KV
// cache the branch ended with: the cache cut to the positions before the
// step, and the step's input fed again as the run fed it. A forward pass
// computes a row the same way whatever else it computes, so these are the
// step's own logits, bit for bit, without the run keeping every step's
// (a class of runs would hold hundreds of MiB of them). nil when the run
// kept no cache for the branch (or dropped it for memory), is still
// running, or ran without a cache. The caller holds the session's lock;
// the function may run after it is released.
func (r *Run) stepLogits(branch int, steps []trace.Step, pos int) func() []float32 {
	c := r.Caches[branch]
	t := r.Trace
	if c == nil || r.Model == nil || r.Live || !t.Options.UseCache || c.Rows() != 1 || len(steps[pos].Rows) != 1 {
		return nil
	}
	sr := steps[pos].Rows[0]
	past := len(t.Prompt.IDs) + pos - len(sr.InputIDs)
	if len(sr.InputIDs) == 0 || len(sr.Positions) != len(sr.InputIDs) || past < 0 || past+len(sr.InputIDs) > c.Len() {
		return nil
	}
	m := r.Model.Model
	return func() []float32 {
		kept := c.Clone()
		kept.Truncate(past)
		mask := make([]bool, past+len(sr.InputIDs))
		for i := range mask {
			mask[i] = true
		}
		logits := [][]float32{make([]float32, m.Info().VocabSize)}
		b := &engine.Batch{Tokens: [][]int{sr.InputIDs}, Positions: [][]int{sr.Positions}, Mask: [][]bool{mask}}
		if err := m.Forward(kept, b, logits); err != nil {
			return nil
		}
		return logits[0]
	}
}

// whatIfOutcome is a step re-sampled with other settings.
type whatIfOutcome struct {
	Row      trace.StepRow // the step's row as the settings would have left it
	partial  int           // > 0: only this many raw logits were recorded
	sampled  bool          // the step recorded a draw, which the outcome reuses
	settings WhatIfSettings
}

// rawScores returns the step's raw logits over the whole vocabulary
// (vocab entries, -Inf where unknown) and how many are known when not all.
func rawScores(sr trace.StepRow, vocab int) ([]float32, int) {
	if len(sr.Logits) == vocab {
		return slices.Clone([]float32(sr.Logits)), 0
	}
	s := make([]float32, vocab)
	for i := range s {
		s[i] = float32(math.Inf(-1))
	}
	// Candidates from a server carry no logit, only a probability: its log
	// stands in (softmax of log-probabilities gives them back).
	noLogits := !slices.ContainsFunc(sr.Candidates, func(c trace.Candidate) bool { return c.Logit != 0 })
	known := 0
	for _, c := range sr.Candidates {
		if c.ID < 0 || c.ID >= vocab || !math.IsInf(float64(s[c.ID]), -1) {
			continue
		}
		v := c.Logit
		if noLogits {
			v = float32(math.Log(c.Prob))
		}
		s[c.ID] = v
		known++
	}
	if known == vocab {
		return s, 0
	}
	return s, known
}

// ReSample applies the processors of the settings to the step's raw
// logits, as generate() would have: the engine's Pipeline in
// transformers' order, the engine's float32 softmax, and, when the step
// was sampled, its own uniform draw u laid on the kept tokens by
// descending probability (ties by id). Without a draw the most probable
// kept token stands for the choice.
func ReSample(w WhatIfStep, s WhatIfSettings) (whatIfOutcome, error) {
	sr := w.Steps[w.pos].Rows[w.row]
	vocab := w.T.Model.VocabSize
	if vocab <= 0 || vocab > 1<<24 {
		return whatIfOutcome{}, fmt.Errorf("this trace's vocabulary size %d is not one the what-if can use", vocab)
	}
	scores, partial := rawScores(sr, vocab)
	if len(w.Logits) == vocab {
		scores, partial = slices.Clone(w.Logits), 0
	}
	o := s.options(w.T.Options)
	o.NumBeams = 1
	prompt := w.T.Prompt.IDs
	if w.row < len(w.T.Prompt.Rows) {
		prompt = w.T.Prompt.Rows[w.row].IDs
	}
	ids := append(slices.Clone(prompt), chosenIDs(w.Steps[:w.pos], w.row)...)
	out := whatIfOutcome{partial: partial, settings: s, Row: trace.StepRow{
		Row: sr.Row, InputIDs: sr.InputIDs, Context: sr.Context, Candidates: sr.Candidates, Entropy: sr.Entropy,
	}}
	for _, p := range engine.Pipeline(o, len(prompt)) {
		p.Apply(scores, ids)
		kept, top := topOf(scores, whatIfTop)
		out.Row.Stages = append(out.Row.Stages, trace.Stage{Name: p.Name(), Params: p.Params(), Kept: kept, Top: top})
	}
	probs := make([]float32, vocab)
	kept := engine.Softmax(probs, scores)
	if kept == 0 {
		return out, errors.New("these settings remove every token: loosen one of them")
	}
	f := &trace.Final{KeptCount: kept}
	for _, id := range byProb(probs, whatIfTop) {
		f.IDs = append(f.IDs, id)
		f.Probs = append(f.Probs, float64(probs[id]))
	}
	if len(f.IDs) == 0 { // every score NaN or infinite: nothing to draw from
		return out, errors.New("these settings leave no finite distribution at this step: move a slider back")
	}
	out.Row.Final = f
	id, by := f.IDs[0], trace.ByGreedy
	if d := sr.Draw; d != nil {
		var lo, hi float64
		id, lo, hi = drawFrom(probs, d.U)
		out.Row.Draw = &trace.Draw{U: d.U, CumBefore: lo, CumAfter: hi}
		by, out.sampled = trace.BySample, true
	}
	out.Row.Chosen = trace.Chosen{ID: id, Token: whatIfToken(w, id), Prob: float64(probs[id]), Rank: rankOf(probs, id), By: by}
	nameTokens(w, out.Row.Stages)
	return out, nil
}

// drawFrom is the engine's choice rule, in its plain reference form: the
// tokens of positive probability by descending probability (ties by id)
// laid end to end, total the sum in id order, and the token whose
// interval holds u·total; it returns the token and its interval over
// [0, 1). The draw nearly always lands among the leading tokens, so they
// are ordered first and the rest only when it does not.
func drawFrom(probs []float32, u float64) (int, float64, float64) {
	var total float64
	positive := 0
	for _, p := range probs {
		if p > 0 {
			total += float64(p)
			positive++
		}
	}
	target := min(max(u, 0), 1) * total
	ids := byProb(probs, drawLead)
	if len(ids) < positive {
		var lead float64
		for _, id := range ids {
			lead += float64(probs[id])
		}
		if lead <= target {
			ids = byProb(probs, positive)
		}
	}
	var lo, hi float64
	for _, id := range ids {
		lo, hi = hi, hi+float64(probs[id])
		if target < hi {
			return id, lo / total, hi / total
		}
	}
	last := ids[len(ids)-1]
	return last, (total - float64(probs[last])) / total, 1
}

// drawLead is how many leading tokens drawFrom orders before it orders
// them all.
const drawLead = 256

// rankOf is the 1-based rank of id by descending probability, ties by id.
func rankOf(probs []float32, id int) int {
	r := 1
	for i, q := range probs {
		if q > probs[id] || q == probs[id] && i < id {
			r++
		}
	}
	return r
}

// byProb lists up to n ids of positive probability, most probable first,
// ties by id. For small n it keeps the best n seen in one pass.
func byProb(probs []float32, n int) []int {
	better := func(a, b int) int { // for sorting: a before b
		if c := cmp.Compare(probs[b], probs[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	if n <= 0 {
		return nil
	}
	if n > 1024 {
		var ids []int
		for i, p := range probs {
			if p > 0 {
				ids = append(ids, i)
			}
		}
		slices.SortFunc(ids, better)
		return ids[:min(n, len(ids))]
	}
	top := make([]int, 0, n+1)
	for i, p := range probs {
		// Ids come in increasing order, so a tie with the last kept loses.
		if !(p > 0) || len(top) == n && p <= probs[top[n-1]] {
			continue
		}
		k, _ := slices.BinarySearchFunc(top, i, better)
		top = slices.Insert(top, k, i)
		if len(top) > n {
			top = top[:n]
		}
	}
	return top
}

// topOf counts the kept scores and lists the n best with their softmax
// probabilities (Logit is the processed score), as a recorded stage does.
func topOf(s []float32, n int) (int, []trace.Candidate) {
	kept := 0
	for _, v := range s {
		if v >= -math.MaxFloat32 {
			kept++
		}
	}
	probs := make([]float32, len(s))
	engine.Softmax(probs, s)
	var top []trace.Candidate
	for _, id := range byProb(probs, n) {
		top = append(top, trace.Candidate{ID: id, Logit: s[id], Prob: float64(probs[id])})
	}
	return kept, top
}

// whatIfToken names a token: by the run's tokenizer, else as the step
// recorded it, else by id.
func whatIfToken(w WhatIfStep, id int) string {
	if w.tok != nil && id < w.tok.VocabSize() {
		return w.tok.Token(id)
	}
	sr := w.Steps[w.pos].Rows[w.row]
	if t := candidateToken(sr, id); !strings.HasPrefix(t, "#") {
		return t
	}
	return ""
}

// nameTokens fills in the tokens of the stages' candidates.
func nameTokens(w WhatIfStep, stages []trace.Stage) {
	for i := range stages {
		for k := range stages[i].Top {
			c := &stages[i].Top[k]
			c.Token = whatIfToken(w, c.ID)
		}
	}
}

// BuildWhatIf renders an outcome with the step's own builders.
func BuildWhatIf(w WhatIfStep, out whatIfOutcome, wd words.Words) view.WhatIfView {
	steps := slices.Clone(w.Steps)
	steps[w.pos].Rows = slices.Clone(steps[w.pos].Rows)
	steps[w.pos].Rows[w.row] = out.Row
	sv := BuildStep(&w.T, steps, w.pos, w.row, nil, wd)
	sv.Tokens, sv.Label = nil, ""
	v := view.WhatIfView{
		Step: sv, Funnel: funnelView(out.Row, w.T.Model.VocabSize, wd), Draw: drawView(out.Row),
		ChosenID: out.Row.Chosen.ID, Label: out.settings.label(),
		Choice: wd.F(words.KeyDbgWhatIfChoice, "token", marks.TokenOrID(out.Row.Chosen.Token, out.Row.Chosen.ID)),
	}
	if out.partial > 0 {
		v.Notes = append(v.Notes, wd.F(words.KeyDbgWhatIfPartial, "n", strconv.Itoa(out.partial), "vocab", strconv.Itoa(w.T.Model.VocabSize)))
	}
	if !out.sampled {
		v.Notes = append(v.Notes, wd.T(words.KeyDbgWhatIfNoDraw))
	}
	return v
}

// keepLogits reports whether a run keeps every raw logit of its steps for
// the what-if panel. A single prompt with the KV cache needs not: once it
// ends, the panel recomputes a step's logits from the cache it kept
// (run.stepLogits), exactly, so a class's runs do not each copy and hold
// the whole vocabulary's logits at every step. Other runs keep them when
// the run's memory estimate, the logits counted, stays within the
// server's limit (Config.MaxRunBytes, --max-run-mib). A run with neither
// shows only its recorded candidates, and the panel says the full
// vocabulary is missing.
func (s *Runner) keepLogits(info engine.Info, o trace.Options, prompts [][]int) bool {
	if o.FullLogits {
		return true
	}
	if len(prompts) == 1 && o.UseCache && o.NumBeams <= 1 && !(o.DoSample && o.NumReturnSequences > 1) {
		return false
	}
	o.FullLogits = true
	return estimateRun(info, o, prompts).total() <= float64(s.cfg.MaxRunBytes)
}
