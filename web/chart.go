package web

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"tracer/trace"
	"tracer/web/plots"
	"tracer/web/view"
	"tracer/web/words"
)

// The server keeps the charts it rendered in one cache for every session
// (a chart's key names its run, not its page: the classroom's followers
// and its instructor share theirs), bounded in count and in bytes.
const (
	chartCacheSize  = 4096
	chartCacheBytes = 64 << 20
)

// pageChartWidth is the width, in CSS px, of the charts the page inlines.
// The stylesheet (the "Charts at their size" block of style.css) gives a
// chart a grid cell at least this wide where the panel has room, and shows
// it from a phone's panel (about 330 px, at least plots.MinScale of this)
// up to 1.5 times this, so chart text, 13 px or more at this width, reads
// at 11 px or more everywhere. The PNG download keeps the plots default,
// a larger image for slides.
const pageChartWidth = 360

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

// chartJob is a chart a view shows, rendered once the session's lock is
// released from the snapshot it holds.
type chartJob struct {
	key   chartKey
	runs  []*trace.Trace
	names []string    // the runs' labels for the key
	step  int         // a step of runs[0], or plots.NoStep
	words plots.Words // the chart's words, in the reader's language
}

// chartsFor lists the charts of a position: for one run (steps is its
// path along branch) or for the runs of a comparison (steps nil: each
// run's trunk), for o's session, palette and language. It snapshots the
// traces; the caller holds the lock.
func chartsFor(runs []*run, branch int, steps []trace.Step, pos int, o buildOpts) (*view.ChartsView, []chartJob) {
	session, dark, words := o.session, o.dark, chartWords(o.words)
	var traces []*trace.Trace
	var names []string
	total := 0
	for _, r := range runs {
		names = append(names, r.label)
		t := *r.trace
		t.Branches = nil
		if steps != nil {
			t.Steps = steps
		}
		t.Steps = slices.Clip(t.Steps)
		total += len(t.Steps)
		traces = append(traces, &t)
	}
	v := &view.ChartsView{}
	var jobs []chartJob
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
		q := "/chart?session=" + session + "&chart=" + k.name + "&step=" + strconv.Itoa(pos)
		v.Charts = append(v.Charts, view.ChartView{Name: k.name, Title: k.title, SVGURL: q + "&format=svg", PNGURL: q + "&format=png"})
		jobs = append(jobs, chartJob{
			key:  chartKey{run: runs[0].id, branch: branch, step: step, steps: total, chart: k.name, format: "svg", dark: dark, lang: o.words.Lang},
			runs: traces, names: names, step: step, words: words,
		})
	}
	return v, jobs
}

// renderCharts fills the view's charts, from the session's cache when it
// has them. A chart without data to draw is left out.
func renderCharts(c *chartCache, v *view.ChartsView, jobs []chartJob) {
	kept := v.Charts[:0]
	for i, j := range jobs {
		ch := v.Charts[i]
		b, err := chart(c, j)
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

// chart renders one chart through the cache.
func chart(c *chartCache, j chartJob) ([]byte, error) {
	if b, ok := c.get(j.key); ok {
		return b, nil
	}
	f, width := plots.SVG, pageChartWidth
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

// handleChart downloads one chart of the session's current run as SVG or
// PNG: /chart?session=&chart=&step=&format=svg|png.
func (s *Server) handleChart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sess, ok := s.sessions.get(q.Get("session"))
	if !ok {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	format := q.Get("format")
	if format == "" {
		format = "svg"
	}
	if format != "svg" && format != "png" {
		http.Error(w, fmt.Sprintf("format %q: want svg or png", format), http.StatusBadRequest)
		return
	}
	step, err := strconv.Atoi(q.Get("step"))
	if err != nil {
		http.Error(w, "step: want a step index", http.StatusBadRequest)
		return
	}
	name := q.Get("chart")
	job, err := chartRequest(sess, name, step, s.words)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	job.key.format = format
	b, err := chart(s.charts, job)
	switch {
	case errors.Is(err, plots.ErrNoData):
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, "could not draw the chart: "+err.Error(), http.StatusInternalServerError)
		return
	}
	ct := "image/svg+xml"
	if format == "png" {
		ct = "image/png"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="tracer-%s-step%d.%s"`, name, step+1, format))
	w.Write(b)
}

// chartRequest finds the chart named name at step of what the session
// shows, worded in the session's language (words gives a language's).
func chartRequest(sess *session, name string, step int, words func(lang string) words.Words) (chartJob, error) {
	sess.mu.Lock()
	o := buildOpts{session: sess.id, dark: sess.dark, words: words(sess.lang)}
	sess.mu.Unlock()
	src := sess.source()
	src.mu.Lock()
	defer src.mu.Unlock()
	d, cur := src.doc, src.cur
	runs, branch := d.runs[:1], cur.branch
	var steps []trace.Step
	if d.compare {
		runs, branch = d.runs, 0
	} else {
		steps = pathSteps(d.runs[0].trace, branch)
	}
	n := d.count(branch)
	if d.walk != nil {
		n = len(d.runs[0].trace.Steps)
	}
	if step < 0 || step >= n {
		return chartJob{}, fmt.Errorf("step index %d is out of range: this run has steps 0 to %d", step, n-1)
	}
	v, jobs := chartsFor(runs, branch, steps, step, o)
	for i, c := range v.Charts {
		if c.Name == name {
			return jobs[i], nil
		}
	}
	return chartJob{}, fmt.Errorf("no chart %q for this run", name)
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

// chartCache keeps recently rendered charts, least recently used first
// out, at most max of them and maxBytes of their data.
type chartCache struct {
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

func newChartCache(max int, maxBytes int64) *chartCache {
	return &chartCache{max: max, maxBytes: maxBytes, order: list.New(), byKey: map[chartKey]*list.Element{}}
}

func (c *chartCache) get(k chartKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*chartEntry).data, true
}

func (c *chartCache) put(k chartKey, b []byte) {
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

// len returns the number of cached charts.
func (c *chartCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
