package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"tracer/trace"
	"tracer/web/export"
	"tracer/web/internal/testsupport"
	"tracer/web/runs"
	"tracer/web/view"
)

// FuzzImportedTrace drives an imported trace through everything a page
// can ask of it, as the server does after an upload: the plausibility
// check, the views of its first positions with their charts, the what-if
// panel at each, and the one-file export. None may panic, and what the
// check lets through must cost no more than the trace is large.
func FuzzImportedTrace(f *testing.F) {
	f.Add(testsupport.ToyJSON(f))
	f.Add(testsupport.LoopTrace(f, 6))
	s, err := New(Config{NoPull: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	w := s.Words("en")
	charts := view.NewChartCache(64, 16<<20)
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data), 1<<20)
		if err != nil || s.CheckImport(tr) != nil {
			return
		}
		d := s.NewDocument(tr, "imported fuzz.json")
		for pos := range min(d.Count(0), 4) {
			cur := runs.Cursor{Pos: pos}
			v, jobs := runs.BuildStepper(d, cur, runs.BuildOpts{Charts: true, Words: w})
			if v.Charts != nil {
				view.RenderCharts(charts, v.Charts, jobs)
			}
			wi, err := runs.WhatIfAt(d, cur)
			var here runs.ErrWhatIfHere
			if errors.As(err, &here) || err != nil {
				continue
			}
			var form *runs.WhatIfForm
			set, err := form.Apply(runs.SettingsOf(wi.T.Options), wi.T.Model.VocabSize)
			if err != nil {
				continue
			}
			if _, err := runs.ReSample(wi, set); err != nil {
				continue
			}
		}
		export.Document(context.Background(), io.Discard, d, w, true)
	})
}
