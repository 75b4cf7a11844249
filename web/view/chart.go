package view

import (
	"bytes"
	"container/list"
	"errors"
	"slices"
	"strconv"
	"sync"

	"tracer/trace"
	"tracer/web/plots"
	"tracer/web/words"
)

// The server keeps the charts it rendered in one cache for every session
// (a chart's key names its run, not its page: the classroom's followers
// and its instructor share theirs), bounded in count and in bytes.
const (
	ChartCacheSize  = 4096
	ChartCacheBytes = 64 << 20
)

// PageChartWidth is the width, in CSS px, of the charts the page inlines.
// The stylesheet (the "Charts at their size" block of style.css) gives a
// chart a grid cell at least this wide where the panel has room, and shows
// it from a phone's panel (about 330 px, at least plots.MinScale of this)
// up to 1.5 times this, so chart text, 13 px or more at this width, reads
// at 11 px or more everywhere. The PNG download keeps the plots default,
// a larger image for slides.
const PageChartWidth = 360

// chartKind is one chart the page offers.
type chartKind struct {
	name, title string
	needs       func(steps []trace.Step) bool // whether the trace has the data; nil: always
}

// chartKinds lists the charts in the order the page shows them.
func chartKinds() []chartKind {
	return []chartKind{
		{name: "candidates", title: "Candidates at this step"},
		{name: "confidence", title: "Top-1 probability and entropy"},
		{name: "kv", title: "KV cache over the steps", needs: func(s []trace.Step) bool {
			return slices.ContainsFunc(s, func(x trace.Step) bool { return x.KV != nil })
		}},
		{name: "cost", title: "Bytes moved and time per step", needs: func(s []trace.Step) bool {
			return slices.ContainsFunc(s, func(x trace.Step) bool { return x.Traffic != nil })
		}},
	}
}

// chartKey names one rendered chart: the run (or the first run of a
// comparison), the branch, the chart, the step, how many steps the run had
// (a live run's chart changes as it grows) and the format.
type chartKey struct {
	dark                bool
	run                 uint64
	branch, step, steps int
	chart, format       string
	lang                string // the words' language
}

// ChartJob is a chart a view shows, rendered once the session's lock is
// released from the snapshot it holds.
type ChartJob struct {
	key   chartKey
	runs  []*trace.Trace
	names []string    // the runs' labels for the key
	step  int         // a step of runs[0], or plots.NoStep
	words plots.Words // the chart's words, in the reader's language
}

// As is the job drawn in another format: "svg" or "png".
func (j ChartJob) As(format string) ChartJob {
	j.key.format = format
	return j
}

// ChartOpts are the reader's settings the charts are drawn for: the page's
// session (for the download links), its palette and its language.
type ChartOpts struct {
	Session string
	Dark    bool
	W       words.Words
}

// ChartsFor lists the charts of a position pos of traces (one run, or the
// runs of a comparison, each trace's Steps the path the charts show),
// named names; runID (the first run's) and branch key the cache.
func ChartsFor(traces []*trace.Trace, names []string, runID uint64, branch, pos int, o ChartOpts) (*ChartsView, []ChartJob) {
	total := 0
	for _, t := range traces {
		total += len(t.Steps)
	}
	ww := chartWords(o.W)
	v := &ChartsView{}
	var jobs []ChartJob
	for _, k := range chartKinds() {
		if k.needs != nil && !k.needs(traces[0].Steps) {
			continue
		}
		step := pos
		if step >= len(traces[0].Steps) { // a comparison past its first run's end
			if k.name == "candidates" {
				continue
			}
			step = plots.NoStep
		}
		q := "/chart?session=" + o.Session + "&chart=" + k.name + "&step=" + strconv.Itoa(pos)
		v.Charts = append(v.Charts, ChartView{Name: k.name, Title: k.title, SVGURL: q + "&format=svg", PNGURL: q + "&format=png"})
		jobs = append(jobs, ChartJob{
			key:  chartKey{run: runID, branch: branch, step: step, steps: total, chart: k.name, format: "svg", dark: o.Dark, lang: o.W.Lang},
			runs: traces, names: names, step: step, words: ww,
		})
	}
	return v, jobs
}

// RenderCharts fills the view's charts, from the session's cache when it
// has them. A chart without data to draw is left out.
func RenderCharts(c *ChartCache, v *ChartsView, jobs []ChartJob) {
	kept := v.Charts[:0]
	for i, j := range jobs {
		ch := v.Charts[i]
		b, err := Chart(c, j)
		switch {
		case errors.Is(err, plots.ErrNoData):
			continue
		case err != nil:
			ch.Error = err.Error()
		default:
			ch.SVG = inlineSVG(b)
		}
		kept = append(kept, ch)
	}
	v.Charts = kept
}

// Chart renders one chart through the cache.
func Chart(c *ChartCache, j ChartJob) ([]byte, error) {
	if b, ok := c.get(j.key); ok {
		return b, nil
	}
	f, width := plots.SVG, PageChartWidth
	if j.key.format == "png" {
		f, width = plots.PNG, 0
	}
	b, err := plots.Render(plots.Chart(j.key.chart), j.runs, j.step, f, plots.Options{Names: j.names, Dark: j.key.dark, Width: width, Words: j.words})
	if err != nil {
		return nil, err
	}
	c.put(j.key, b)
	return b, nil
}

// inlineSVG drops what comes before the <svg> element (an XML declaration,
// a doctype), which HTML does not want inline.
func inlineSVG(b []byte) string {
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return string(b)
}

// chartWords are the charts' words in w's language; a Words without a
// catalog (a view built for a test) leaves them English.
func chartWords(w words.Words) plots.Words {
	if !w.Known() {
		return plots.Words{}
	}
	return plots.Words{
		Probability: w.T(words.KeyDbgPlotProbability), RawP: w.T(words.KeyDbgPlotRawP), FinalP: w.T(words.KeyDbgPlotFinalP),
		Chosen: w.T(words.KeyDbgPlotChosen), Removed: w.T(words.KeyDbgPlotRemoved), StepChose: w.T(words.KeyDbgPlotStepChose),
		HowPicked: w.T(words.KeyDbgPlotHowPicked), HowPlain: w.T(words.KeyDbgPlotHowPlain), Greedy: w.T(words.KeyDbgPlotGreedy),
		Sampled: w.T(words.KeyDbgPlotSampled), Beam: w.T(words.KeyDbgPlotBeam), Forced: w.T(words.KeyDbgPlotForced),
		Step: w.T(words.KeyDbgPlotStep), StepN: w.T(words.KeyDbgPlotStepN), Top1: w.T(words.KeyDbgPlotTop1),
		Entropy: w.T(words.KeyDbgPlotEntropy), Top1Raw: w.T(words.KeyDbgPlotTop1Raw), ChosenFinal: w.T(words.KeyDbgPlotChosenFinal),
		ConfidenceOver: w.T(words.KeyDbgPlotConfidenceOver), ConfidenceAt: w.T(words.KeyDbgPlotConfidenceAt),
		KVAxis: w.T(words.KeyDbgPlotKVAxis), KVOver: w.T(words.KeyDbgPlotKVOver), KVHeld: w.T(words.KeyDbgPlotKVHeld),
		KVAt: w.T(words.KeyDbgPlotKVAt), Moved: w.T(words.KeyDbgPlotMoved), Compute: w.T(words.KeyDbgPlotCompute),
		Time: w.T(words.KeyDbgPlotTime), CostOver: w.T(words.KeyDbgPlotCostOver), CostAt: w.T(words.KeyDbgPlotCostAt),
		Prefill: w.T(words.KeyDbgPlotPrefill), Decode: w.T(words.KeyDbgPlotDecode), Full: w.T(words.KeyDbgPlotFull),
		CacheOn: w.T(words.KeyDbgPlotCacheOn), CacheOff: w.T(words.KeyDbgPlotCacheOff), RunN: w.T(words.KeyDbgPlotRunN),
	}
}

// ChartCache keeps recently rendered charts, least recently used first
// out, at most max of them and maxBytes of their data.
type ChartCache struct {
	max      int
	maxBytes int64

	mu    sync.Mutex
	order *list.List // of *chartEntry, most recent at the front
	byKey map[chartKey]*list.Element
	bytes int64
}

type chartEntry struct {
	key  chartKey
	data []byte
}

func NewChartCache(max int, maxBytes int64) *ChartCache {
	return &ChartCache{max: max, maxBytes: maxBytes, order: list.New(), byKey: map[chartKey]*list.Element{}}
}

func (c *ChartCache) get(k chartKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*chartEntry).data, true
}

func (c *ChartCache) put(k chartKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		c.bytes += int64(len(b) - len(e.Value.(*chartEntry).data))
		e.Value.(*chartEntry).data = b
		c.order.MoveToFront(e)
	} else {
		c.byKey[k] = c.order.PushFront(&chartEntry{key: k, data: b})
		c.bytes += int64(len(b))
	}
	for c.order.Len() > c.max || c.bytes > c.maxBytes && c.order.Len() > 1 {
		last := c.order.Back()
		c.order.Remove(last)
		c.bytes -= int64(len(last.Value.(*chartEntry).data))
		delete(c.byKey, last.Value.(*chartEntry).key)
	}
}

// Len returns the number of cached charts.
func (c *ChartCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// chartTitleKeys are the wording keys of the charts' titles.
var chartTitleKeys = map[string]string{
	"candidates": words.KeyDbgChartCandidates,
	"confidence": words.KeyDbgChartConfidence,
	"kv":         words.KeyDbgChartKv,
	"cost":       words.KeyDbgChartCost,
}

// LocalizeCharts words the charts' titles in w's language (the chart
// images themselves are drawn by web/plots).
func LocalizeCharts(c *ChartsView, w words.Words) {
	if c == nil {
		return
	}
	for i := range c.Charts {
		if k, ok := chartTitleKeys[c.Charts[i].Name]; ok {
			c.Charts[i].Title = w.T(k)
		}
	}
}
