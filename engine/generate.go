package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"tracer/engine/tensor"
	"tracer/engine/tokenizer"
	"tracer/trace"
)

// Request is one generate() call.
type Request struct {
	Model     Model
	Tokenizer tokenizer.Tokenizer // may be nil: tokens are then shown by id only
	Prompts   [][]int             // one prompt, or a batch; unpadded
	Options   trace.Options       // resolved by Resolve
	Notices   []string            // from Resolve, copied into the trace
	Prompt    trace.Prompt        // text and chat messages for the trace; ids are filled in
	Rand      Rand                // nil: SeededRand{Options.Seed}

	// Force, when set, makes row r choose Force[r][i] at step i (teacher
	// forcing per row), like Options.ForceIDs does for every row.
	Force [][]int

	// Resume, when set, continues an earlier run instead of starting
	// afresh; KeepCache, when set, receives the cache when the run ends.
	// Together they let a branch reuse the keys and values of the prefix it
	// shares with its parent.
	Resume    *Resume
	KeepCache func(Cache)

	// Record builds a trace.Step for every step (candidates, stages, the
	// final distribution, KV cache, traffic). Off, the loop only decodes.
	// With Options.RecordAttention, RecordLens or RecordForward each row
	// also records the inside of the model, which must then be an
	// InsideModel.
	Record bool
	// OnStep, when set, receives each recorded step as soon as it exists.
	OnStep func(trace.Step)
}

// Resume is where a run continues from: the tokens each row chose before
// step Step (so len(Tokens[r]) == Step), and a cache holding the keys and
// values of the rows' first Cache.Len() positions — typically a Clone of the
// earlier run's cache, truncated with Truncate. The options must be the
// earlier run's (the cache was sized for them).
type Resume struct {
	Cache  Cache
	Tokens [][]int // [rows][Step]
	Step   int
}

// Generate runs the generation loop and returns its trace: every step when
// req.Record is set, and always the output. Cancelling ctx ends the run
// early with stop reason "cancelled"; the partial trace is returned.
func Generate(ctx context.Context, req Request) (*trace.Trace, error) {
	g, err := newLoop(req)
	if err != nil {
		return nil, err
	}
	if req.KeepCache != nil {
		defer func() { req.KeepCache(g.cache) }()
	}
	if g.req.Options.NumBeams > 1 {
		stop, best, err := g.beamSearch(ctx)
		if err != nil {
			return nil, err
		}
		g.beamOutput(stop, best)
		return g.t, nil
	}
	if err := g.run(ctx); err != nil {
		return nil, err
	}
	return g.t, nil
}

// loop is the state of one Generate call.
type loop struct {
	req        Request
	info       Info
	t          *trace.Trace // the trace being built
	rec        *recorder    // nil: recording off
	procs      []Processor
	rnd        Rand
	cache      Cache
	rows       [][]int  // [rows][len]: prompt (padded) and generated ids
	mask       [][]bool // [rows][len]: false = padding
	promptLen  int
	maxLen     int      // the length limit, prompt included
	lengthStop string   // the stop reason at that limit: max_new_tokens or max_length
	firstStep  int      // 0, or the step a resumed run continues from
	finished   []bool   // [rows]
	stops      []string // [rows]: why each finished row stopped
	newText    []string // [rows]: decoded new tokens, kept for stop strings

	batch  Batch
	pos    [][]int     // [rows][len]: position ids of every slot, reused by fillBatch
	picker picker      // pick's scratch
	logits [][]float32 // [rows][vocab]: raw logits of the last forward
	scores []float32   // [vocab]: one row's processed scores
	probs  []float32   // [vocab]: one row's final distribution
	next   []int       // [rows]: the tokens a step chose, appended once every row has chosen

	inside      *Inside     // nil: nothing recorded from inside the model
	insideModel InsideModel // the model, when inside is set
}

// newLoop checks a request and prepares its loop: the rows laid out and
// padded, the length limit, the trace begun, the recorder, the cache (new
// or resumed) and every buffer a step needs. The options are Resolve's,
// already validated; newLoop checks what only the request holds.
func newLoop(req Request) (*loop, error) {
	info := req.Model.Info()
	if err := checkRequest(req, info); err != nil {
		return nil, err
	}
	req.Options = paddingInForce(req.Options, len(req.Prompts) > 1)
	o := req.Options
	rows, mask, err := layOut(req.Prompts, o)
	if err != nil {
		return nil, err
	}
	g := &loop{
		req: req, info: info, rows: rows, mask: mask, promptLen: len(rows[0]),
		procs:    Pipeline(o, len(rows[0])),
		rnd:      req.Rand,
		finished: make([]bool, len(rows)),
		stops:    make([]string, len(rows)),
	}
	if err := g.setLength(); err != nil {
		return nil, err
	}
	g.t = g.newTrace()
	if g.rnd == nil {
		g.rnd = SeededRand{Seed: o.Seed}
	}
	if req.Record {
		g.rec = &recorder{tok: req.Tokenizer, top: o.RecordTop, full: o.FullLogits}
	}
	if g.inside, g.insideModel, err = newInside(o, req.Model, req.Record, len(rows), g.promptLen); err != nil {
		return nil, err
	}
	if req.Resume != nil {
		err = g.resume(*req.Resume)
	} else {
		g.cache, err = req.Model.NewCache(len(rows), g.maxLen)
	}
	if err != nil {
		return nil, err
	}
	g.allocate()
	return g, nil
}

// checkRequest checks what a request holds besides its options: the
// prompts, the forced tokens, and what beam search cannot do.
func checkRequest(req Request, info Info) error {
	if err := checkPrompts(req.Prompts, info); err != nil {
		return err
	}
	for r, ids := range req.Force {
		for i, id := range ids {
			if id < 0 || id >= info.VocabSize {
				return &OptionError{Msg: fmt.Sprintf("forced token %d (row %d, step %d) is outside the vocabulary (0..%d)", id, r, i, info.VocabSize-1)}
			}
		}
	}
	switch {
	case req.Options.NumBeams > 1 && len(req.Prompts) > 1:
		return errors.New("engine: beam search takes one prompt at a time")
	case req.Options.NumBeams > 1 && req.Resume != nil:
		return errors.New("engine: beam search cannot resume from a branch")
	}
	return nil
}

// checkPrompts checks prompts before a run: at least one, none empty, every
// id in the vocabulary. Prompts are numbered from 1.
func checkPrompts(prompts [][]int, info Info) error {
	if len(prompts) == 0 {
		return errors.New("engine: no prompt: give at least one prompt")
	}
	for i, p := range prompts {
		if len(p) == 0 {
			return fmt.Errorf("engine: prompt %d is empty: give at least one token (e.g. the BOS id)", i+1)
		}
		for _, id := range p {
			if id < 0 || id >= info.VocabSize {
				return fmt.Errorf("engine: prompt %d: token id %d is outside the vocabulary (0..%d)", i+1, id, info.VocabSize-1)
			}
		}
	}
	return nil
}

// paddingInForce returns the options with the padding side a run uses:
// a batch pads on the left unless told otherwise; a single prompt (beams
// included) is not padded, and its trace names no padding.
func paddingInForce(o trace.Options, batch bool) trace.Options {
	switch {
	case batch && o.Padding == "":
		o.Padding = "left"
	case !batch && (o.Padding != "" || o.Sources["padding"] != ""):
		o.Padding = ""
		o.Sources = maps.Clone(o.Sources)
		delete(o.Sources, "padding")
	}
	return o
}

// layOut returns the rows a run starts from, padded, with their masks:
// num_beams copies of the prompt for beam search, else the prompts (each
// repeated when sampling returns several sequences).
func layOut(prompts [][]int, o trace.Options) ([][]int, [][]bool, error) {
	if o.NumBeams > 1 {
		prompts = slices.Repeat(prompts[:1], o.NumBeams)
	}
	return padPrompts(prompts, o)
}

// setLength sets the length limit and its stop reason, and checks that the
// prompt leaves room below it and the limit fits the model.
func (g *loop) setLength() error {
	o := &g.req.Options
	g.maxLen, g.lengthStop = o.MaxLength, trace.StopMaxLength
	if o.MaxNewTokens >= 0 {
		g.maxLen, g.lengthStop = g.promptLen+o.MaxNewTokens, trace.StopMaxNewTokens
	}
	if g.promptLen >= g.maxLen {
		return fmt.Errorf("engine: the prompt holds %d tokens but max_length is %d (it counts the prompt): nothing can be generated; set max_new_tokens instead", g.promptLen, g.maxLen)
	}
	if g.info.MaxPositions > 0 && g.maxLen > g.info.MaxPositions {
		return fmt.Errorf("engine: prompt plus new tokens (%d) exceed the model's %d positions; lower max_new_tokens", g.maxLen, g.info.MaxPositions)
	}
	return nil
}

// newTrace begins the run's trace: the model, the options, the prompt as
// fed (one row for beams, which are copies of it) and the notices.
func (g *loop) newTrace() *trace.Trace {
	o := g.req.Options
	t := &trace.Trace{Format: trace.Format, Model: g.info.TraceModel(), Options: o, Prompt: g.req.Prompt, Notices: g.req.Notices, Steps: []trace.Step{}}
	promptRows := g.rows
	if o.NumBeams > 1 {
		promptRows = g.rows[:1]
	}
	fillPrompt(&t.Prompt, promptRows, g.mask, g.req.Tokenizer)
	// Beams are copies of one prompt and never padded: the pad token matters
	// to a batch of prompts, and to beam search only where it returns several
	// sequences (the shorter ones are padded).
	if len(g.rows) > 1 && (o.NumBeams <= 1 || o.NumReturnSequences > 1) && o.Sources["pad_token_id"] == SourceDefault {
		t.Notices = append(t.Notices, fmt.Sprintf("pad_token_id is not set: using eos_token_id %d as the pad token, as transformers does", o.PadTokenID))
	}
	return t
}

// resume continues an earlier run: the tokens chosen so far are appended
// to the rows (marking the rows they stopped), and the cache is the
// earlier run's.
func (g *loop) resume(rs Resume) error {
	if len(rs.Tokens) != len(g.rows) || rs.Cache == nil || rs.Cache.Rows() != len(g.rows) {
		return fmt.Errorf("engine: resume: want a cache and tokens for %d rows", len(g.rows))
	}
	for r := range g.rows {
		if len(rs.Tokens[r]) != rs.Step {
			return fmt.Errorf("engine: resume: row %d has %d tokens, want %d (one per step before step %d)", r, len(rs.Tokens[r]), rs.Step, rs.Step)
		}
		for _, id := range rs.Tokens[r] {
			if id < 0 || id >= g.info.VocabSize {
				return fmt.Errorf("engine: resume: token id %d is outside the vocabulary (0..%d)", id, g.info.VocabSize-1)
			}
			g.rows[r] = append(g.rows[r], id)
			g.mask[r] = append(g.mask[r], true)
			if !g.finished[r] {
				g.checkStop(r, id)
			}
		}
	}
	if rs.Cache.Len() >= len(g.rows[0]) {
		return fmt.Errorf("engine: resume: the cache holds %d positions, want fewer than the %d tokens so far", rs.Cache.Len(), len(g.rows[0]))
	}
	g.cache, g.firstStep = rs.Cache, rs.Step
	return nil
}

// allocate makes room for every token and every buffer a step uses, so
// that steps do not allocate.
func (g *loop) allocate() {
	g.pos = make([][]int, len(g.rows))
	for r := range g.rows {
		g.rows[r] = slices.Grow(g.rows[r], g.maxLen-len(g.rows[r]))
		g.mask[r] = slices.Grow(g.mask[r], g.maxLen-len(g.mask[r]))
		g.pos[r] = make([]int, 0, g.maxLen)
	}
	g.logits = make([][]float32, len(g.rows))
	for i := range g.logits {
		g.logits[i] = make([]float32, g.info.VocabSize)
	}
	g.scores = make([]float32, g.info.VocabSize)
	g.probs = make([]float32, g.info.VocabSize)
	g.next = make([]int, len(g.rows))
}

// run is the generation loop, step by step as the lessons draw it: feed the
// model (forward), turn each row's logits into a distribution (process) and
// pick a token from it (choose), append the tokens, and stop when every row
// has met an EOS or a stop string, or at the length limit.
func (g *loop) run(ctx context.Context) error {
	for step := g.firstStep; len(g.rows[0]) < g.maxLen && slices.Contains(g.finished, false); step++ {
		if ctx.Err() != nil {
			return g.stop(trace.StopCancelled)
		}
		start := time.Now()
		past, phase, err := g.forward(step)
		if err == nil {
			err = g.checkLogits(step, past)
		}
		rec := g.newStep(step, phase, err)
		for r := 0; err == nil && r < len(g.rows); r++ { // every row chooses before any grows, so a NaN stop leaves them even
			g.next[r], err = g.choose(step, r, rec)
		}
		if err != nil {
			return g.stopOn(err)
		}
		g.append(rec)
		g.record(rec, past, start)
	}
	return g.stop(g.lengthStop)
}

// forward feeds the rows to the model for a step: with the cache, the whole
// prompt at the first step and then only the newest token; without it, the
// whole sequence. It returns the positions the cache held before and the
// phase. When the inside of the model is recorded, it asks for it (the
// prompt's attention matrices at step 0 with record_attention "all").
func (g *loop) forward(step int) (past int, phase string, err error) {
	past = g.cache.Len()
	phase = trace.PhaseDecode
	if !g.req.Options.UseCache {
		g.cache.Truncate(0)
		past, phase = 0, trace.PhaseFull
	} else if past == 0 {
		phase = trace.PhasePrefill
	}
	g.fillBatch(past)
	if g.inside != nil {
		g.inside.AllAttention = step == 0 && g.req.Options.RecordAttention == trace.RecordAttentionAll
		return past, phase, g.insideModel.ForwardInside(g.cache, &g.batch, g.logits, g.inside)
	}
	return past, phase, g.req.Model.Forward(g.cache, &g.batch, g.logits)
}

// newStep returns the step to record, or nil when recording is off (or
// the step failed before choosing).
func (g *loop) newStep(step int, phase string, err error) *trace.Step {
	if g.rec == nil || err != nil {
		return nil
	}
	return &trace.Step{Index: step, Phase: phase, Rows: make([]trace.StepRow, len(g.rows))}
}

// choose processes row r's logits and picks its token, recording the
// step when recording is on. It returns a *nanStop when the processors
// leave a NaN or +Inf, or no token with positive probability.
func (g *loop) choose(step, r int, rec *trace.Step) (int, error) {
	var row *trace.StepRow
	if rec != nil {
		// The raw view and each stage are taken here, as the pipeline
		// runs. Handing them to other goroutines (a copy of the scores
		// and a thread's wakeup each, then a wait for them) took as long
		// on a 2-core VM (SmolLM2-135M, four processors: 350 µs a step
		// either way), and a busy server has no idle core for them.
		row = &rec.Rows[r]
		g.rec.raw(row, g.logits[r])
	}
	if err := g.process(step, r, row); err != nil {
		return 0, err
	}
	return g.pick(step, r, row)
}

// process runs the processors on row r's logits, leaving the scores in
// g.scores, and records each stage when row is not nil.
func (g *loop) process(step, r int, row *trace.StepRow) error {
	s := g.scores
	copy(s, g.logits[r])
	for _, p := range g.procs {
		if row != nil {
			g.rec.before(p, s, g.rows[r])
		}
		p.Apply(s, g.rows[r])
		if row != nil {
			row.Stages = append(row.Stages, g.rec.stage(p, s))
		}
	}
	if len(g.procs) > 0 {
		if bad, empty := scanScores(s); bad >= 0 || empty {
			return g.processorNaN(step, r)
		}
	}
	return nil
}

// pick chooses row r's token from the processed scores: the forced one,
// a sample from their softmax, or the most probable. The uniform number is
// drawn at every step, so that streams stay aligned.
func (g *loop) pick(step, r int, row *trace.StepRow) (int, error) {
	o := &g.req.Options
	s := g.scores
	u := g.rnd.Uniform(step, r)
	var id int
	by := trace.ByGreedy
	switch {
	case r < len(g.req.Force) && step < len(g.req.Force[r]):
		id, by = g.req.Force[r][step], trace.ByForced
	case step < len(o.ForceIDs):
		id, by = o.ForceIDs[step], trace.ByForced
	case o.DoSample:
		by = trace.BySample
	default:
		// The scores hold no NaN and some finite one (checkLogits,
		// process), so there is a largest.
		id = tensor.Argmax(s)
	}
	if by != trace.BySample && row == nil {
		return id, nil
	}
	kept := Softmax(g.probs, s)
	if by == trace.BySample {
		var lo, hi float64
		var ok bool
		if id, lo, hi, ok = g.picker.pick(g.probs, u); !ok {
			return 0, newNaNStop(trace.NaN{Step: step, Row: r, Where: trace.NaNNoMass, Layer: -1}, g.info.Layers)
		}
		if row != nil {
			row.Draw = &trace.Draw{U: u, CumBefore: lo, CumAfter: hi}
		}
	}
	if row != nil {
		var rk int
		row.Final, rk = g.rec.final(g.probs, kept, id)
		row.Chosen = trace.Chosen{ID: id, Token: g.rec.token(id), Prob: float64(g.probs[id]), Rank: rk, By: by}
	}
	return id, nil
}

// append adds the chosen tokens to the rows: a finished row gets the pad
// token, by "forced" in the record; the others may stop at what they got.
func (g *loop) append(rec *trace.Step) {
	for r, id := range g.next {
		if g.finished[r] {
			id = g.req.Options.PadTokenID
			if rec != nil {
				rec.Rows[r].Finished = true
				rec.Rows[r].Chosen = trace.Chosen{ID: id, Token: g.rec.token(id), By: trace.ByForced}
			}
		}
		g.rows[r] = append(g.rows[r], id)
		g.mask[r] = append(g.mask[r], true)
		if !g.finished[r] {
			g.checkStop(r, id)
		}
	}
}

// checkStop marks row r finished when id is an EOS or completes a stop string.
func (g *loop) checkStop(r, id int) {
	o := &g.req.Options
	if slices.Contains(o.EOSTokenID, id) {
		g.finished[r], g.stops[r] = true, trace.StopEOS
		return
	}
	if len(o.StopStrings) == 0 || g.req.Tokenizer == nil {
		return
	}
	if g.newText == nil {
		g.newText = make([]string, len(g.rows))
	}
	// Decoding the whole new text (not the token alone) lets a stop string
	// span tokens and a token complete a multi-byte character.
	text, err := g.req.Tokenizer.Decode(g.rows[r][g.promptLen:], false)
	if err != nil {
		return
	}
	before := len(g.newText[r])
	g.newText[r] = text
	for _, s := range o.StopStrings {
		// The stop string must end inside the newest token's text.
		if i := strings.LastIndex(text, s); i >= 0 && i+len(s) > before {
			g.finished[r], g.stops[r] = true, trace.StopString
			return
		}
	}
}

// record completes a recorded step and hands it on.
func (g *loop) record(rec *trace.Step, past int, start time.Time) {
	if rec == nil {
		return
	}
	g.recordInside(rec)
	g.finishRecord(rec, past, start)
	g.t.Steps = append(g.t.Steps, *rec)
	if g.req.OnStep != nil {
		g.req.OnStep(*rec)
	}
}

// recordInside adds to each row of a recorded step what the forward pass
// showed inside the model.
func (g *loop) recordInside(rec *trace.Step) {
	if g.inside == nil {
		return
	}
	for r := range rec.Rows {
		rec.Rows[r].Inside = g.rec.inside(g.inside, r, g.req.Options.RecordLens, g.info.VocabSize)
	}
}

// finishRecord adds what every recorded step holds besides its rows: the
// inputs, the KV cache, the traffic and the time taken.
func (g *loop) finishRecord(rec *trace.Step, past int, start time.Time) {
	for r := range rec.Rows {
		rec.Rows[r].Row = r
		rec.Rows[r].InputIDs = slices.Clone(g.batch.Tokens[r])
		rec.Rows[r].Positions = slices.Clone(g.batch.Positions[r])
		rec.Rows[r].Context = len(g.rows[r]) - 1
	}
	if lb := g.cache.LayerBytes(); lb != nil {
		kv := &trace.KV{Positions: g.cache.Len(), BytesPerLayer: lb}
		for _, b := range lb {
			kv.Bytes += b
		}
		rec.KV = kv
	}
	if c := g.req.Model.Cost(len(g.rows), past, len(g.batch.Tokens[0])); c != (trace.Traffic{}) {
		if br, ok := g.cache.(BatchReporter); ok {
			if calls, tokens := br.LastBatch(); calls > 1 {
				c.BatchRuns, c.BatchTokens = calls, tokens
			}
		}
		rec.Traffic = &c
	}
	rec.ElapsedNS = time.Since(start).Nanoseconds()
}

// stopOn ends the run on a step's error: a StopError or a NaN is a stop,
// with its notice; anything else fails the run.
func (g *loop) stopOn(err error) error {
	var se *StopError // declared here: taking its address allocates
	if errors.As(err, &se) {
		g.t.Notices = append(g.t.Notices, se.Msg)
		return g.stop(se.Reason)
	}
	var ns *nanStop
	if errors.As(err, &ns) {
		g.t.Notices = append(g.t.Notices, ns.Error())
		g.t.Output.NaN = &ns.nan
		return g.stop(trace.StopNaN)
	}
	return err
}

// stop ends the run with a stop reason and fills the output. At the length
// limit with every row already stopped, the rows' own reasons win: an EOS,
// or a stop string.
func (g *loop) stop(reason string) error {
	if reason == g.lengthStop && !slices.Contains(g.finished, false) {
		reason = trace.StopEOS
		for _, s := range g.stops {
			if s != trace.StopEOS {
				reason = s
			}
		}
	}
	for i := range g.stops {
		if !g.finished[i] {
			g.stops[i] = reason
		}
	}
	nan := g.t.Output.NaN
	g.t.Output = g.output(reason)
	g.t.Output.NaN = nan
	return nil
}

// output assembles the trace's output: every row as transformers returns
// it, and for a single prompt the ids, the new ids and their text.
func (g *loop) output(stop string) trace.Output {
	out := trace.Output{StopReason: stop}
	decode := g.decode
	if len(g.rows) == 1 {
		out.IDs = append([]int{}, g.rows[0]...)
		out.NewIDs = append([]int{}, g.rows[0][g.promptLen:]...)
		out.Text, out.NewText = decode(out.IDs), decode(out.NewIDs)
		return out
	}
	out.RowStops = g.stops
	for r, row := range g.rows {
		out.Sequences = append(out.Sequences, append([]int{}, row...))
		out.NewTexts = append(out.NewTexts, decode(trimPads(g.rows[r][g.promptLen:], g.req.Options.PadTokenID, g.finished[r])))
	}
	return out
}

// trimPads drops the pads a finished row produced after it stopped.
func trimPads(ids []int, pad int, finished bool) []int {
	if !finished {
		return ids
	}
	end := len(ids)
	for end > 0 && ids[end-1] == pad {
		end--
	}
	// Keep the EOS itself when it doubles as the pad token.
	if end < len(ids) {
		end++
	}
	return ids[:end]
}

// beamOutput fills the output with the best num_return_sequences
// hypotheses, laid out as transformers' finalize does: prompt + tokens, the
// first EOS id after a hypothesis shorter than the longest, pads after.
func (g *loop) beamOutput(stop string, best *nBest) {
	o := &g.req.Options
	t := g.t
	t.Output.StopReason = stop
	hyps := slices.Clone(best.hyps)
	slices.SortStableFunc(hyps, func(a, b hypothesis) int { return cmpFloat(a.score, b.score) })
	var chosen []hypothesis
	for range o.NumReturnSequences {
		chosen = append(chosen, hyps[len(hyps)-1])
		hyps = hyps[:len(hyps)-1]
	}
	maxLen := 0
	for _, h := range chosen {
		maxLen = max(maxLen, g.promptLen+len(h.tokens))
	}
	width := maxLen + 1
	if limit := len(g.rows[0]); width > limit {
		width = limit
	}
	prompt := g.rows[0][:g.promptLen]
	for _, h := range chosen {
		seq := append(slices.Clone(prompt), h.tokens...)
		if len(seq) < width && len(o.EOSTokenID) > 0 {
			seq = append(seq, o.EOSTokenID[0])
		}
		for len(seq) < width {
			seq = append(seq, o.PadTokenID)
		}
		t.Output.Sequences = append(t.Output.Sequences, seq)
		t.Output.SequencesScores = append(t.Output.SequencesScores, float32(h.score))
		t.Output.NewTexts = append(t.Output.NewTexts, g.decode(h.tokens))
	}
	t.Output.IDs = slices.Clone(t.Output.Sequences[0])
	t.Output.NewIDs = slices.Clone(t.Output.IDs[g.promptLen:])
	t.Output.Text, t.Output.NewText = g.decode(t.Output.IDs), g.decode(t.Output.NewIDs)
}

// decode returns the text of ids without special tokens ("" without a
// tokenizer).
func (g *loop) decode(ids []int) string {
	if g.req.Tokenizer == nil {
		return ""
	}
	s, _ := g.req.Tokenizer.Decode(ids, true)
	return s
}

// fillBatch sets the forward input: with the cache, the whole prompt at the
// first step and then only the newest token; without it, the whole sequence.
// It reuses the batch's and the positions' storage, so a step allocates
// nothing.
func (g *loop) fillBatch(past int) {
	b := &g.batch
	b.Tokens, b.Positions, b.Mask = b.Tokens[:0], b.Positions[:0], b.Mask[:0]
	if len(g.pos) != len(g.rows) {
		g.pos = make([][]int, len(g.rows))
	}
	for r := range g.rows {
		g.pos[r] = positions(g.pos[r], g.mask[r])
		b.Tokens = append(b.Tokens, g.rows[r][past:])
		b.Mask = append(b.Mask, g.mask[r])
		b.Positions = append(b.Positions, g.pos[r][past:])
	}
}

// positions writes transformers' position ids for a row's mask to dst
// (grown as needed) and returns it: cumsum(mask) - 1, with padded slots set
// to 1.
func positions(dst []int, mask []bool) []int {
	dst = slices.Grow(dst[:0], len(mask))[:len(mask)]
	n := 0
	for i, m := range mask {
		if m {
			dst[i] = n
			n++
		} else {
			dst[i] = 1
		}
	}
	return dst
}

// Softmax writes the probabilities of scores to dst (float32, like torch)
// and returns how many are non-zero (tokens not removed). The exponentials
// are tensor.Exp's in float64, a block at a time, rounded to float32; the
// sum runs in order.
//
// After a top-k or top-p, few scores are left (at most sparseMax, under an
// eighth): their exponentials alone are taken (softmaxKept), which gives
// the same bits, as the removed ones add 0 to the sum (50 kept of 49,152:
// 245 → 95 µs a step).
func Softmax(dst, s []float32) int {
	m, _ := tensor.MaxNaN(s) // a NaN is not the maximum; see softmaxBlocks
	kept := tensor.CountKept(s)
	if kept > 0 && kept <= sparseMax && kept*8 < len(s) && m <= math.MaxFloat32 {
		var ids [sparseMax]int32
		n := 0
		for i, v := range s {
			if v >= -math.MaxFloat32 || v != v {
				ids[n] = int32(i)
				n++
			}
		}
		if softmaxKept(dst, s, ids[:n], m) {
			return kept
		}
	}
	softmaxBlocks(dst, s, m)
	return kept
}

// softmaxBlocks is Softmax over every score, m the largest: the
// exponentials of s - m rounded to float32 and their sum in order
// (tensor.ExpRoundSum), then the division. A NaN score makes its
// exponential, the sum and so every probability NaN, as taking it for the
// maximum would.
func softmaxBlocks(dst, s []float32, m float32) {
	tensor.Div(dst, tensor.ExpRoundSum(dst, s, m, 0))
}

// expBlock is how many exponentials softmaxKept computes at a time, on the
// stack.
const expBlock = 512

// sparseMax bounds the kept scores Softmax takes apart from the rest.
const sparseMax = 4096

// softmaxKept is Softmax for scores that are -Inf but at ids (ascending),
// the largest m finite: it takes their exponentials alone. Each is the one
// softmaxBlocks gives (tensor.ExpRoundSum): tensor.Exp's lanes, or
// math.Exp for the last len(s) mod 4 scores, which it leaves to Go. The
// sum adds the same non-zero terms in the same order, and a removed score's
// probability is 0/sum = 0 either way. With a NaN score it does nothing
// and returns false: every probability is NaN then, which Softmax's blocks
// give.
func softmaxKept(dst, s []float32, ids []int32, m float32) bool {
	for _, i := range ids {
		if s[i] != s[i] {
			return false
		}
	}
	clear(dst)
	lanes := len(s) &^ 3 // the scores tensor.Exp takes in lanes in Softmax's blocks
	var sum float32
	var buf [expBlock]float64
	for lo := 0; lo < len(ids); lo += expBlock {
		blk := ids[lo:min(lo+expBlock, len(ids))]
		n := 0
		for _, i := range blk {
			if int(i) >= lanes { // the last few of s, so the last of ids
				break
			}
			buf[n] = float64(s[i] - m)
			n++
		}
		padded := (n + 3) &^ 3 // whole lanes: no element of the block left to Go
		clear(buf[n:padded])
		tensor.Exp(buf[:padded], buf[:padded])
		for j, i := range blk[:n] {
			dst[i] = float32(buf[j])
			sum += dst[i]
		}
		for _, i := range blk[n:] {
			dst[i] = float32(math.Exp(float64(s[i] - m)))
			sum += dst[i]
		}
	}
	for _, i := range ids {
		dst[i] /= sum
	}
	return true
}
