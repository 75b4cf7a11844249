package runs

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"tracer/engine/models"
	"tracer/lessons"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// CompareSpecs prepares the runs of a comparison and names it. Without a
// second model each line of the form's variants is one run of the form's
// model. With one (f.CompareModel: another file of the same model, say
// its F16 and Q4_0 files, or "=q4_k", the form's model quantized as it
// loads) every line runs on both models, side by side,
// and no line means the form's own settings on both. Every run takes the
// form's seed, so sampled runs draw from one random stream and differ
// only where the weights changed the distribution. The runs are labelled
// by file and weight type.
func (s *Runner) CompareSpecs(f Form) ([]Spec, string, error) {
	if f.CompareModel == "" {
		vs, err := f.variants()
		if err != nil {
			return nil, "", err
		}
		var specs []Spec
		for _, v := range vs {
			sp, err := s.Prepare(v.form, v.label)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", v.label, err)
			}
			specs = append(specs, sp)
		}
		return specs, fmt.Sprintf("comparison of %d runs of %s", len(specs), specs[0].Name), nil
	}
	vs, err := f.variantLines()
	if err != nil {
		return nil, "", err
	}
	if len(vs) == 0 {
		vs = []variant{{form: f}}
		vs[0].form.Variants, vs[0].form.CompareModel = "", ""
	}
	if 2*len(vs) > maxVariants {
		return nil, "", fmt.Errorf("compare takes at most %d runs: with a second model, at most %d lines of settings (each runs on both models), got %d", maxVariants, maxVariants/2, len(vs))
	}
	// "=TYPE": the second model is the form's own, quantized to TYPE as it
	// loads: F32 against Q4_K of the same weights, without a second file.
	second, quant := f.CompareModel, f.Quantize
	if q, ok := strings.CutPrefix(f.CompareModel, "="); ok {
		second, quant = f.Model, q
	}
	var specs []Spec
	for _, v := range vs {
		for k, name := range []string{f.Model, second} {
			form := v.form
			form.Model = name
			if k == 1 {
				form.Quantize = quant
			}
			sp, err := s.Prepare(form, v.label)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", cmpLabel(v.label, name), err)
			}
			sp.Label = fileLabel(v.label, name, sp.model)
			if k == 1 && quant != "" && second == f.Model {
				sp.Label = cmpLabel(v.label, path.Base(name)+" quantized to "+quant+" ("+strings.Join(typesByBytes(sp.model.Model.Info().WeightTypes), ", ")+")")
			}
			specs = append(specs, sp)
		}
	}
	if err := sameVocabulary(specs[0], specs[1]); err != nil {
		return nil, "", err
	}
	return specs, fmt.Sprintf("comparison of %s and %s", strings.TrimPrefix(specs[0].Label, vs[0].label+" · "), strings.TrimPrefix(specs[1].Label, vs[0].label+" · ")), nil
}

// fileLabel names a run of a two-model comparison by its file and weight
// type, after its line of settings if any: "greedy · model-q4_0.gguf (q4_0)".
func fileLabel(line, name string, m *models.Loaded) string {
	info := m.Model.Info()
	return cmpLabel(line, path.Base(name)+" ("+info.DType+")")
}

// typesByBytes lists a model's weight types, the one holding the most
// bytes first: a quantized copy keeps in float32 the matrices whose rows
// hold no block of its type (stories260K's MLP rows of 172).
func typesByBytes(types map[string]int64) []string {
	names := make([]string, 0, len(types))
	for k := range types {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(types[b], types[a]), strings.Compare(a, b)) })
	return names
}

// cmpLabel joins a line of settings (may be empty) and a model.
func cmpLabel(line, model string) string {
	if line == "" {
		return model
	}
	return line + " · " + model
}

// sameVocabulary checks that two runs' models can be compared token by
// token: the same architecture, vocabulary size and tokenizer (every
// token and the special ids alike), as two files of one model are.
func sameVocabulary(a, b Spec) error {
	ia, ib := a.model.Model.Info(), b.model.Model.Info()
	fail := func(what string) error {
		return fmt.Errorf("compare: %s and %s are not files of one model (%s): choose as the second model another file of %s, e.g. its F16 or Q4_0 version",
			a.Name, b.Name, what, a.Name)
	}
	if ia.Architecture != ib.Architecture {
		return fail(fmt.Sprintf("architecture %s vs %s", ia.Architecture, ib.Architecture))
	}
	if ia.VocabSize != ib.VocabSize {
		return fail(fmt.Sprintf("vocabulary of %d vs %d tokens", ia.VocabSize, ib.VocabSize))
	}
	ta, tb := a.model.Tokenizer, b.model.Tokenizer
	if (ta == nil) != (tb == nil) {
		return fail("one has a tokenizer, the other none")
	}
	if ta == nil {
		return nil
	}
	if ta.Specials() != tb.Specials() {
		return fail(fmt.Sprintf("special tokens %+v vs %+v", ta.Specials(), tb.Specials()))
	}
	for id := range ia.VocabSize {
		if x, y := ta.Token(id), tb.Token(id); x != y {
			return fail(fmt.Sprintf("token %d is %q vs %q", id, x, y))
		}
	}
	return nil
}

// compareStepper is a position of a comparison: every run's step at the
// same index, the table of their choices with the first divergence, and
// the distance between their distributions.
func compareStepper(d *Document, cur Cursor, o BuildOpts) (view.StepperView, []view.ChartJob) {
	n := d.Count(0)
	pos := min(max(cur.Pos, 0), n-1)
	first := d.Runs[0].Trace
	v := view.StepperView{
		Source: d.sourceText(o.Words), ModelName: first.Model.Name, Notices: slices.Clone(first.Notices),
		Index: pos, Count: n, AtStart: pos == 0, AtEnd: pos == n-1, Hit: cur.Hit,
		Position: o.Words.F(lessons.KeyStepNOfTotal, "n", strconv.Itoa(pos+1), "total", strconv.Itoa(n)),
	}
	v.Status = compareStatus(d, o.Words)
	v.Compare = compareView(d, pos, o.Session, o.Words)
	var jobs []view.ChartJob
	if o.Charts {
		v.Charts, jobs = ChartsFor(d.Runs, 0, nil, pos, o)
	}
	return v, jobs
}

// compareStatus sums up the runs' states.
func compareStatus(d *Document, w words.Words) view.StatusView {
	done := 0
	for _, r := range d.Runs {
		if !r.Live {
			done++
		}
	}
	if done < len(d.Runs) {
		return view.StatusView{State: "running", Text: w.F(words.KeyDbgCmpRunning, "done", strconv.Itoa(done), "total", strconv.Itoa(len(d.Runs)))}
	}
	return view.StatusView{State: "done", Text: w.F(words.KeyDbgCmpDone, "n", strconv.Itoa(len(d.Runs)), "seed", strconv.FormatUint(d.Runs[0].Trace.Options.Seed, 10))}
}

// compareView lays the runs side by side at position pos.
func compareView(d *Document, pos int, session string, w words.Words) *view.CompareView {
	n := d.Count(0)
	div := divergence(d.Runs)
	v := &view.CompareView{Current: pos, Divergence: div}
	for i := range n {
		v.Steps = append(v.Steps, i+1)
	}
	base := d.Runs[0].Trace.Steps
	for k, r := range d.Runs {
		t := r.Trace
		rv := view.CompareRunView{Label: r.Label, Status: statusView(r, 0, len(t.Steps), w).Text, Output: t.Output.NewText}
		rv.Export = "/export?session=" + session + "&run=" + strconv.Itoa(k)
		rv.File = "tracer-" + RunFileName(k, r.Label)
		for i := range n {
			cell := view.CompareCellView{Current: i == pos, Diverged: i == div}
			if i < len(t.Steps) {
				c := t.Steps[i].Rows[0].Chosen
				cell.Token = marks.TokenOrID(c.Token, c.ID)
				cell.Differs = i >= len(base) || base[i].Rows[0].Chosen.ID != c.ID
			} else {
				cell.Token = "·"
			}
			rv.Cells = append(rv.Cells, cell)
			tv := "–"
			if i < len(t.Steps) && i < len(base) {
				tv = strconv.FormatFloat(totalVariation(base[i].Rows[0], t.Steps[i].Rows[0]), 'f', 3, 64)
			}
			rv.TV = append(rv.TV, tv)
		}
		if pos < len(t.Steps) {
			rv.Step = BuildStep(t, t.Steps, pos, 0, nil, w)
		} else {
			rv.Step = view.StepView{Label: w.T(words.KeyDbgContext), Tokens: tokensBefore(t, t.Steps, len(t.Steps), 0), Note: w.T(words.KeyDbgCmpStopped)}
		}
		v.Runs = append(v.Runs, rv)
	}
	v.Says = divergenceText(d.Runs, div, w)
	return v
}

// divergence is the first step where the runs' choices differ (a run that
// has stopped counts as choosing nothing), or -1.
func divergence(runs []*Run) int {
	longest := 0
	for _, r := range runs {
		longest = max(longest, len(r.Trace.Steps))
	}
	for i := range longest {
		id := -2
		for k, r := range runs {
			got := -1
			if i < len(r.Trace.Steps) {
				got = r.Trace.Steps[i].Rows[0].Chosen.ID
			}
			if k == 0 {
				id = got
			} else if got != id {
				return i
			}
		}
	}
	return -1
}

// divergenceText says where and how the runs part.
func divergenceText(runs []*Run, div int, w words.Words) string {
	if div < 0 {
		return w.T(words.KeyDbgCmpSame)
	}
	var picks []string
	for _, r := range runs {
		what := w.T(words.KeyDbgCmpStoppedPick)
		if div < len(r.Trace.Steps) {
			c := r.Trace.Steps[div].Rows[0].Chosen
			what = strconv.Quote(marks.TokenOrID(c.Token, c.ID))
		}
		picks = append(picks, w.F(words.KeyDbgCmpChose, "run", r.Label, "what", what))
	}
	return w.F(words.KeyDbgCmpDiffer, "n", strconv.Itoa(div+1), "picks", strings.Join(picks, ", "))
}

// totalVariation is half the L1 distance between two steps' final
// distributions, over the tokens either recorded (a token one side did not
// record counts as 0 there). Without a final distribution the raw
// candidates stand in.
func totalVariation(a, b trace.StepRow) float64 {
	pa, pb := distribution(a), distribution(b)
	var sum float64
	for id, p := range pa {
		sum += math.Abs(p - pb[id])
	}
	for id, q := range pb {
		if _, ok := pa[id]; !ok {
			sum += q
		}
	}
	return min(sum/2, 1)
}

func distribution(r trace.StepRow) map[int]float64 {
	m := map[int]float64{}
	if f := r.Final; f != nil {
		for k, id := range f.IDs {
			m[id] = f.Probs[k]
		}
		return m
	}
	for _, c := range r.Candidates {
		m[c.ID] = c.Prob
	}
	return m
}
