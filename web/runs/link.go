package runs

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"tracer/engine"
	"tracer/web/catalog"
)

// The debugger's deep link: /?model=NAME&prompt=TEXT&seed=7&... opens the
// page on that run, generated before the page is served, instead of the
// toy's. With variants= (one line of settings per run, as in the Compare
// box) it opens a comparison. step= puts the stepper at a position (from
// 0). The lesson figures' "open in the debugger" links are such links.

// linkFields are the query names a deep link may carry: the run form's
// fields, named as in transformers' GenerationConfig, and the page's own.
var linkFields = []string{
	"model", "input", "prompt", "system", "do_sample", "temperature", "top_k", "top_p", "min_p",
	"repetition_penalty", "seed", "max_new_tokens", "num_beams", "use_cache", "padding", "variants",
	"step", "lang",
}

// IsDeepLink reports whether the page's query asks for a run of its own.
func IsDeepLink(q url.Values) bool { return q.Has("model") }

// LinkForm reads a deep link's query into a run form, rejecting names it
// does not know and names given twice.
func LinkForm(q url.Values) (Form, int, error) {
	var unknown []string
	for name, vs := range q {
		if !slices.Contains(linkFields, name) {
			unknown = append(unknown, name)
			continue
		}
		if len(vs) > 1 {
			return Form{}, 0, fmt.Errorf("link: %s is given %d times: give it once", name, len(vs))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Form{}, 0, fmt.Errorf("link: unknown setting %s (a link may set %s)", strings.Join(unknown, ", "), strings.Join(linkFields, ", "))
	}
	f := Form{
		Model: q.Get("model"), Input: q.Get("input"), Prompt: q.Get("prompt"), System: q.Get("system"),
		DoSample: q.Get("do_sample"), Temperature: q.Get("temperature"), TopK: q.Get("top_k"), TopP: q.Get("top_p"),
		MinP: q.Get("min_p"), RepetitionPenalty: q.Get("repetition_penalty"), Seed: q.Get("seed"),
		MaxNewTokens: q.Get("max_new_tokens"), NumBeams: q.Get("num_beams"), UseCache: q.Get("use_cache"),
		Padding: q.Get("padding"), Variants: q.Get("variants"),
	}
	step := 0
	if v := q.Get("step"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, 0, fmt.Errorf("link: step %q: want a step number from 0", v)
		}
		step = n
	}
	return f, step, nil
}

// LinkedRun generates the run (or the comparison) a deep link asks for and
// returns the document to show, with the stepper position it asks for.
func (s *Runner) LinkedRun(ctx context.Context, q url.Values) (*Document, int, error) {
	f, step, err := LinkForm(q)
	if err != nil {
		return nil, 0, err
	}
	var specs []Spec
	if strings.TrimSpace(f.Variants) != "" {
		vs, err := f.variants()
		if err != nil {
			return nil, 0, fmt.Errorf("link: %w", err)
		}
		for _, v := range vs {
			sp, err := s.Prepare(v.form, v.label)
			if err != nil {
				return nil, 0, fmt.Errorf("link: %s: %w", v.label, err)
			}
			specs = append(specs, sp)
		}
	} else {
		sp, err := s.Prepare(f, "")
		if err != nil {
			return nil, 0, fmt.Errorf("link: %w", err)
		}
		specs = []Spec{sp}
	}
	if specs[0].server != nil { // serverrun.go
		return nil, 0, fmt.Errorf("link: a link runs a local model, and %s is a server's: open the page and run it from the model menu", strings.TrimPrefix(specs[0].Name, catalog.ServerPrefix))
	}
	select {
	case s.Slots <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-s.Slots }()
	d := &Document{Compare: len(specs) > 1, Source: fmt.Sprintf("comparison of %d runs of %s", len(specs), specs[0].Name)}
	for _, sp := range specs {
		req := sp.req
		var kept engine.Cache
		req.KeepCache = func(c engine.Cache) { kept = c }
		t, err := s.generate(ctx, "the linked run", req)
		if err != nil {
			return nil, 0, fmt.Errorf("link: %s: %w", sp.Label, err)
		}
		req.KeepCache = nil // a branch keeps its own
		if !d.Compare {
			// A lone run: the toy's is narrated as the walkthrough.
			d = s.NewDocument(t, fmt.Sprintf("run of %s, %s", sp.Name, sp.Label))
		} else {
			d.Runs = append(d.Runs, NewRun(s.runIDs.Add(1), t, sp.Label))
		}
		r := d.Runs[len(d.Runs)-1]
		r.Model, r.Req, r.Caches[0] = sp.model, req, kept
	}
	return d, step, nil
}
