package runs

import (
	"strconv"

	"tracer/trace"
	"tracer/web/words"
)

// Origin says where a document came from, so that each page words it in
// its own language (a classroom's pages may differ).
type Origin struct {
	Kind  string // originRun, originCompare or originImported; "" shows the document's source as written
	model string // the model as the catalog names it
	n     int    // runs compared
	File  string // the imported file's name
	copy  bool   // a student's copy of the instructor's document
}

// Kinds of origin.
const (
	originRun      = "run"
	originCompare  = "compare"
	OriginImported = "imported"
)

// sourceText is where the document came from, in w's language.
func (d *Document) sourceText(w words.Words) string {
	o := d.Origin
	text := d.Source
	switch o.Kind {
	case originRun:
		text = w.F(words.KeyDbgSrcRun, "model", o.model, "how", describeIn(d.Runs[0].Trace.Options, w))
	case originCompare:
		text = w.F(words.KeyDbgSrcCompare, "n", strconv.Itoa(o.n), "model", o.model)
	case OriginImported:
		text = w.F(words.KeyDbgSrcImported, "file", o.File)
	}
	if o.copy && o.Kind != "" {
		text = w.F(words.KeyDbgSrcCopy, "source", text)
	}
	return text
}

// describeIn names a run's decoding in w's language, as describe does in
// English.
func describeIn(o trace.Options, w words.Words) string {
	switch {
	case o.NumBeams > 1:
		return w.F(words.KeyDbgHowBeam, "n", strconv.Itoa(o.NumBeams))
	case o.DoSample:
		return w.F(words.KeyDbgHowSampled, "t", strconv.FormatFloat(o.Temperature, 'g', -1, 64), "seed", strconv.FormatUint(o.Seed, 10))
	}
	return w.T(words.KeyDbgHowGreedy)
}

// byWord names how a token was chosen, in w's language.
func byWord(by string, w words.Words) string {
	switch by {
	case trace.ByGreedy:
		return w.T(words.KeyDbgByGreedy)
	case trace.BySample:
		return w.T(words.KeyDbgBySampled)
	case trace.ByForced:
		return w.T(words.KeyDbgByForced)
	case trace.ByBeam:
		return w.T(words.KeyDbgByBeam)
	}
	return by
}
