package web

import (
	"strconv"

	"tracer/trace"
)

// origin says where a document came from, so that each page words it in
// its own language (a classroom's pages may differ).
type origin struct {
	kind  string // originRun, originCompare or originImported; "" shows the document's source as written
	model string // the model as the catalog names it
	n     int    // runs compared
	file  string // the imported file's name
	copy  bool   // a student's copy of the instructor's document
}

// Kinds of origin.
const (
	originRun      = "run"
	originCompare  = "compare"
	originImported = "imported"
)

// sourceText is where the document came from, in w's language.
func (d *document) sourceText(w Words) string {
	o := d.origin
	text := d.source
	switch o.kind {
	case originRun:
		text = w.F(keyDbgSrcRun, "model", o.model, "how", describeIn(d.runs[0].trace.Options, w))
	case originCompare:
		text = w.F(keyDbgSrcCompare, "n", strconv.Itoa(o.n), "model", o.model)
	case originImported:
		text = w.F(keyDbgSrcImported, "file", o.file)
	}
	if o.copy && o.kind != "" {
		text = w.F(keyDbgSrcCopy, "source", text)
	}
	return text
}

// describeIn names a run's decoding in w's language, as describe does in
// English.
func describeIn(o trace.Options, w Words) string {
	switch {
	case o.NumBeams > 1:
		return w.F(keyDbgHowBeam, "n", strconv.Itoa(o.NumBeams))
	case o.DoSample:
		return w.F(keyDbgHowSampled, "t", strconv.FormatFloat(o.Temperature, 'g', -1, 64), "seed", strconv.FormatUint(o.Seed, 10))
	}
	return w.T(keyDbgHowGreedy)
}

// byWord names how a token was chosen, in w's language.
func byWord(by string, w Words) string {
	switch by {
	case trace.ByGreedy:
		return w.T(keyDbgByGreedy)
	case trace.BySample:
		return w.T(keyDbgBySampled)
	case trace.ByForced:
		return w.T(keyDbgByForced)
	case trace.ByBeam:
		return w.T(keyDbgByBeam)
	}
	return by
}

// chartTitleKeys are the wording keys of the charts' titles.
var chartTitleKeys = map[string]string{
	"candidates": keyDbgChartCandidates,
	"confidence": keyDbgChartConfidence,
	"kv":         keyDbgChartKv,
	"cost":       keyDbgChartCost,
}

// localizeCharts words the charts' titles in w's language (the chart
// images themselves are drawn by web/plots).
func localizeCharts(c *ChartsView, w Words) {
	if c == nil {
		return
	}
	for i := range c.Charts {
		if k, ok := chartTitleKeys[c.Charts[i].Name]; ok {
			c.Charts[i].Title = w.T(k)
		}
	}
}
