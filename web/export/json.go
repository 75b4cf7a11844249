package export

import (
	"archive/zip"
	"bytes"
	"fmt"

	"tracer/trace"
	"tracer/web/runs"
)

// JSON is the JSON download of run k of d (a snapshot), or of every
// run (k < 0): a single run as tracer-trace.json (a comparison's as
// tracer-run-K-label.json), a whole comparison as a zip archive of every
// run (run-1-greedy.json, run-2-T=0.7.json, ...), so that none is lost.
// Full logits a run kept for the what-if panel are left out.
func JSON(d *runs.Document, k int) (name, contentType string, body []byte, err error) {
	var ts []*trace.Trace
	var names []string
	for i, x := range d.Runs {
		if k >= 0 && i != k {
			continue
		}
		t := x.Trace
		if x.KeptLogits {
			t = runs.WithoutLogits(t)
		}
		ts = append(ts, t)
		names = append(names, runs.RunFileName(i, x.Label))
	}
	var b bytes.Buffer
	if k < 0 && d.Compare {
		if err := writeZip(&b, ts, names); err != nil {
			return "", "", nil, fmt.Errorf("could not write the traces: %w", err)
		}
		return "tracer-compare.zip", "application/zip", b.Bytes(), nil
	}
	name = "tracer-trace.json"
	if d.Compare {
		name = "tracer-" + names[0]
	}
	if err := trace.Write(&b, ts[0]); err != nil {
		return "", "", nil, fmt.Errorf("could not write the trace: %w", err)
	}
	return name, "application/json", b.Bytes(), nil
}

// writeZip writes the traces into one zip archive under their names.
func writeZip(b *bytes.Buffer, ts []*trace.Trace, names []string) error {
	z := zip.NewWriter(b)
	for i, t := range ts {
		f, err := z.Create(names[i])
		if err != nil {
			return err
		}
		if err := trace.Write(f, t); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
	}
	return z.Close()
}
