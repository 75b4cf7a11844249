package runs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"tracer/engine/bench"
	"tracer/engine/tokenizer"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// Sizes of the step panels.
const (
	funnelTokens  = 8  // leading raw candidates followed through the stages
	funnelRemoved = 4  // of the candidates a stage removed, the leading ones shown besides
	streamWindow  = 16 // tokens replayed into the stream decoder to find what it holds back
)

// panelsView shows step pos of steps (a run's path) for one row in detail.
// A look inside the step that is not kept starts only when look is true.
func panelsView(r *Run, steps []trace.Step, pos, row int, w words.Words, machine bench.Machine, look bool) *view.PanelsView {
	s := steps[pos]
	sr := s.Rows[min(row, len(s.Rows)-1)]
	var prev *trace.Step
	if pos > 0 {
		prev = &steps[pos-1]
	}
	v := &view.PanelsView{
		Funnel:    funnelView(sr, r.Trace.Model.VocabSize, w),
		Draw:      drawView(sr),
		Chosen:    chosenView(r.Trace, sr, w),
		KV:        kvView(s, prev, w),
		Traffic:   trafficView(s, w, machine),
		Tokenizer: tokenizerView(r, steps, pos, row, w),
		Inside:    InsideFor(r, steps, pos, row, w, look),
	}
	serverPanels(r.Trace, sr, v, w) // a server's step says why panels are empty (serverpanels.go)
	return v
}

// funnelView follows the leading raw candidates through the processors.
func funnelView(sr trace.StepRow, vocab int, w words.Words) view.FunnelView {
	var v view.FunnelView
	if len(sr.Stages) == 0 {
		v.Empty = w.T(words.KeyDbgFunnelRaw)
		if sr.Chosen.By == trace.ByForced {
			v.Empty = w.T(words.KeyDbgFunnelForced)
		}
		return v
	}
	for _, st := range sr.Stages {
		v.Stages = append(v.Stages, view.StageView{
			Name: st.Name, Params: paramsText(st.Params),
			Kept:  fmt.Sprintf("%d of %d", st.Kept, vocab),
			Width: keptShare(st.Kept, vocab),
		})
	}
	// The leading raw candidates that survive, and the leading ones a stage
	// removed, each up to its quota: with top-k 10 the first rows are all
	// kept, and the removed rows below them show what top-k took away.
	kept, removed := 0, 0
	for k, c := range sr.Candidates {
		if kept == funnelTokens && removed == funnelRemoved {
			break
		}
		ft := view.FunnelTokenView{Token: marks.TokenOrID(c.Token, c.ID), Rank: k + 1, Chosen: c.ID == sr.Chosen.ID}
		for _, st := range sr.Stages {
			m := stageMark(st, c.ID)
			if m == "removed" && ft.RemovedBy == "" {
				ft.RemovedBy = st.Name
			}
			ft.Marks = append(ft.Marks, m)
		}
		if ft.RemovedBy == "" && kept < funnelTokens {
			kept++
		} else if ft.RemovedBy != "" && removed < funnelRemoved {
			removed++
		} else {
			continue
		}
		v.Tokens = append(v.Tokens, ft)
	}
	return v
}

// stageMark says whether id survived a stage: it is among the stage's
// recorded leaders, or it is not and every kept token was recorded.
func stageMark(st trace.Stage, id int) string {
	if slices.ContainsFunc(st.Top, func(c trace.Candidate) bool { return c.ID == id && !math.IsInf(float64(c.Logit), -1) }) {
		return "kept"
	}
	if st.Kept <= len(st.Top) {
		return "removed"
	}
	return "unknown"
}

// paramsText writes a stage's parameters: "k=50, min_keep=1".
func paramsText(p map[string]float64) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(p[k], 'g', 4, 64)
	}
	return strings.Join(parts, ", ")
}

// keptShare is kept/vocab as a CSS width, on a linear scale: "8 of 512"
// is 1.6 % of the bar, as a reader takes a bar's length to mean. (A log
// scale put it at a third, unlabelled.) Out-of-range counts are clamped.
func keptShare(kept, vocab int) string {
	if vocab <= 0 || kept <= 0 {
		return "0%"
	}
	f := float64(kept) / float64(vocab)
	return strconv.FormatFloat(100*min(f, 1), 'f', 3, 64) + "%"
}

// drawView lays the final distribution on [0, 1) with the draw's marker.
func drawView(sr trace.StepRow) *view.DrawView {
	d, f := sr.Draw, sr.Final
	if d == nil || f == nil {
		return nil
	}
	v := &view.DrawView{
		Marker: percent(d.U), U: strconv.FormatFloat(d.U, 'f', 3, 64),
		Interval: fmt.Sprintf("[%.3f, %.3f)", d.CumBefore, d.CumAfter),
	}
	var cum float64
	for k, id := range f.IDs {
		p := f.Probs[k]
		v.Segments = append(v.Segments, view.SegmentView{
			Token: candidateToken(sr, id), Left: percent(cum), Width: percent(p), Chosen: id == sr.Chosen.ID,
		})
		cum += p
	}
	if rest := 1 - cum; rest > 1e-6 {
		v.Segments = append(v.Segments, view.SegmentView{
			Token: fmt.Sprintf("%d more", f.KeptCount-len(f.IDs)), Left: percent(cum), Width: percent(rest), Rest: true,
		})
	}
	return v
}

// candidateToken finds the text of id among the row's recorded candidates.
func candidateToken(sr trace.StepRow, id int) string {
	if sr.Chosen.ID == id {
		return marks.TokenOrID(sr.Chosen.Token, id)
	}
	for _, c := range sr.Candidates {
		if c.ID == id {
			return marks.TokenOrID(c.Token, id)
		}
	}
	for _, st := range sr.Stages {
		for _, c := range st.Top {
			if c.ID == id {
				return marks.TokenOrID(c.Token, id)
			}
		}
	}
	return "#" + strconv.Itoa(id)
}

// chosenView explains the step's choice.
func chosenView(t *trace.Trace, sr trace.StepRow, w words.Words) view.ChosenView {
	c := sr.Chosen
	v := view.ChosenView{
		Token: view.TokenView{Text: marks.TokenOrID(c.Token, c.ID), Special: isSpecial(t, c.ID)},
		ID:    c.ID, Prob: probText(c.Prob), Rank: c.Rank, By: byWord(c.By, w),
	}
	switch c.By {
	case trace.ByGreedy:
		v.Explain = w.T(words.KeyDbgExplainGreedy)
	case trace.BySample:
		v.Explain = w.T(words.KeyDbgExplainSample)
	case trace.ByForced:
		v.Explain = w.T(words.KeyDbgExplainForced)
	case trace.ByBeam:
		v.Explain = w.T(words.KeyDbgExplainBeam)
	}
	return v
}

// kvView shows the cache after step s and how it grew since prev.
func kvView(s trace.Step, prev *trace.Step, w words.Words) view.KVView {
	kv := s.KV
	if s.Phase == trace.PhaseFull {
		// Cache off: whatever the engine measured, nothing is kept between
		// steps, so there is no cache to show or to grow.
		fed := 0
		if len(s.Rows) > 0 {
			fed = len(s.Rows[0].InputIDs)
		}
		return view.KVView{Off: true, Note: w.F(words.KeyDbgKvOffWhy, "n", strconv.Itoa(fed))}
	}
	if kv == nil {
		return view.KVView{Note: w.T(words.KeyDbgKvNone)}
	}
	v := view.KVView{Present: true, Positions: kv.Positions, Total: bytesText(kv.Bytes)}
	if prev != nil && prev.KV != nil {
		g := kv.Bytes - prev.KV.Bytes
		v.Growth = w.F(words.KeyDbgKvSince, "bytes", signedBytes(g))
	} else {
		v.Growth = w.T(words.KeyDbgKvPrefill)
	}
	var most int64
	for _, b := range kv.BytesPerLayer {
		most = max(most, b)
	}
	for i, b := range kv.BytesPerLayer {
		width := "0%"
		if most > 0 {
			width = percent(float64(b) / float64(most))
		}
		v.Layers = append(v.Layers, view.LayerBytesView{Layer: i, Bytes: bytesText(b), Width: width})
	}
	return v
}

// trafficView shows the step's memory traffic and arithmetic, and the
// achieved bandwidth against the memory the step's bytes come from, as
// the machine's probe measured it (m; unknown while not yet measured:
// "n/a"). A step that reads less than the last-level cache holds reads
// from the cache once the first steps have brought its weights in: it is
// labelled cache-resident and compared with the cache's bandwidth, not
// with main memory's.
func trafficView(s trace.Step, w words.Words, m bench.Machine) view.TrafficView {
	v := view.TrafficView{Bandwidth: "n/a", Time: durationText(s.ElapsedNS)}
	tr := s.Traffic
	if tr == nil {
		v.Note = w.T(words.KeyDbgTrafficNone)
		return v
	}
	v.Present = true
	v.WeightBytes, v.KVRead, v.KVWrite = bytesText(tr.WeightBytes), bytesText(tr.KVReadBytes), bytesText(tr.KVWriteBytes)
	v.FLOPs = flopsText(tr.FLOPs)
	v.Intensity = strconv.FormatFloat(tr.Intensity, 'f', 2, 64) + " FLOP/byte"
	if tr.BatchRuns > 1 {
		v.Batch = w.F(words.KeyDbgTrafficBatch, "tokens", strconv.Itoa(tr.BatchTokens), "others", strconv.Itoa(tr.BatchRuns-1))
	}
	moved := tr.WeightBytes + tr.KVReadBytes + tr.KVWriteBytes
	var limit float64
	if m.Known() {
		bw, resident := m.For(moved)
		limit = bw.MedianGBps
		memory, where := words.KeyDbgMemoryDRAM, words.KeyDbgTrafficFromDRAM
		if resident {
			memory, where = words.KeyDbgMemoryCache, words.KeyDbgTrafficResident
		}
		v.Bandwidth = strconv.FormatFloat(limit, 'f', 1, 64) + " GB/s (" + w.T(memory) + ")"
		v.Resident = resident
		if m.CacheBytes > 0 {
			v.Where = w.F(where, "bytes", bytesText(moved), "cache", bytesText(m.CacheBytes))
		}
		v.Probe = w.F(words.KeyDbgProbeNote, "time", m.At.Format("15:04"), "threads", strconv.Itoa(m.Threads), "passes", strconv.Itoa(m.Passes),
			"lo", strconv.FormatFloat(bw.WorstGBps, 'f', 1, 64), "hi", strconv.FormatFloat(bw.BestGBps, 'f', 1, 64))
	}
	v.Achieved = "n/a"
	if s.ElapsedNS > 0 {
		gbps := float64(moved) / float64(s.ElapsedNS)
		v.Achieved = strconv.FormatFloat(gbps, 'f', 2, 64) + " GB/s"
		if limit > 0 {
			v.Achieved += " (" + strconv.FormatFloat(100*gbps/limit, 'f', 0, 64) + "%)"
		}
	}
	return v
}

// tokenizerView shows the chosen token's bytes and what a stream decoder
// holds back after it. With the model's tokenizer it replays the last
// tokens into tokenizer.Stream; without one it shows the bytes of the
// token's text only.
func tokenizerView(r *Run, steps []trace.Step, pos, row int, w words.Words) view.TokenizerView {
	sr := steps[pos].Rows[min(row, len(steps[pos].Rows)-1)]
	c := sr.Chosen
	v := view.TokenizerView{Token: marks.TokenOrID(c.Token, c.ID)}
	var tok tokenizer.Tokenizer
	if r.Model != nil {
		tok = r.Model.Tokenizer
	}
	switch {
	case tok == nil && c.Token == "":
		v.Hex = w.T(words.KeyDbgUnknown)
		v.Note = w.T(words.KeyDbgTokNone)
		return v
	case tok == nil:
		v.Hex = hexBytes([]byte(c.Token))
		v.Note = w.T(words.KeyDbgTokBytesOnly)
		return v
	}
	v.Hex = hexBytes(tok.TokenBytes(c.ID))
	v.Prompt = promptTokens(r, tok, row)
	ids := chosenIDs(steps[max(0, pos+1-streamWindow):pos+1], row)
	st := tokenizer.NewStream(tok, true)
	var text string
	var held []byte
	for _, id := range ids {
		text, held = st.Push(id)
	}
	switch {
	case len(held) > 0:
		v.Partial = true
		v.Held = hexBytes(held)
		n := w.F(words.KeyDbgNBytes, "n", strconv.Itoa(len(held)))
		if len(held) == 1 {
			n = w.T(words.KeyDbgOneByte)
		}
		v.Text = w.F(words.KeyDbgTokHeld, "bytes", n)
	case text == "":
		v.Text = w.T(words.KeyDbgTokSpecial)
	default:
		v.Text = w.F(words.KeyDbgTokAdds, "text", strconv.Quote(text))
	}
	return v
}

// maxPromptTokens is how many prompt tokens the tokenizer panel lists.
const maxPromptTokens = 256

// promptTokens lists the prompt of row (its real tokens, pads left out)
// with each token's id and bytes.
func promptTokens(r *Run, tok tokenizer.Tokenizer, row int) []view.PromptTokenView {
	p := r.Trace.Prompt
	ids, mask := p.IDs, []int(nil)
	if len(p.Rows) > 0 {
		pr := p.Rows[min(row, len(p.Rows)-1)]
		ids, mask = pr.IDs, pr.AttentionMask
	}
	var out []view.PromptTokenView
	for k, id := range ids {
		if k < len(mask) && mask[k] == 0 {
			continue
		}
		if len(out) == maxPromptTokens {
			break
		}
		out = append(out, view.PromptTokenView{Token: marks.TokenOrID(tok.Token(id), id), ID: id, Hex: hexBytes(tok.TokenBytes(id))})
	}
	return out
}

func hexBytes(b []byte) string {
	if len(b) == 0 {
		return "(none)"
	}
	var sb strings.Builder
	for i, x := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", x)
	}
	return sb.String()
}

// bytesText writes a byte count in binary units: 512 B, 1.5 KiB, 12.0 MiB.
func bytesText(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if math.Abs(f) < 1024 || u == "GiB" {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
		f /= 1024
	}
	return ""
}

func signedBytes(n int64) string {
	if n >= 0 {
		return "+" + bytesText(n)
	}
	return "−" + bytesText(-n)
}

func flopsText(n int64) string {
	f := float64(n)
	for _, u := range []string{"", "k", "M", "G", "T"} {
		if f < 1000 || u == "T" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u + "FLOP"
		}
		f /= 1000
	}
	return ""
}

func durationText(ns int64) string {
	if ns <= 0 {
		return "n/a"
	}
	d := time.Duration(ns)
	if d < time.Millisecond {
		return d.Round(100 * time.Nanosecond).String()
	}
	return d.Round(time.Microsecond).String()
}
