package plots

import "strings"

// Words are the words a chart draws (titles, axis labels, the key), in the
// reader's language. A text may hold placeholders in braces, filled by the
// chart: {n} and {total} (1-based step and step count), {token}, {how},
// {by}, {p}, {rank}, {h} (entropy), {unit}, {bytes}, {positions},
// {phase}, {flops}, {ms}. An empty field reads as English's (see English).
// Token strings, numbers and units (KiB, MFLOP, ms, nats) are not words:
// the chart writes them as it does in every language.
type Words struct {
	// The candidates chart.
	Probability string // the y axis: "probability"
	RawP        string // the raw bars' key
	FinalP      string // the final bars' key
	Chosen      string // the chosen token's key
	Removed     string // the key of × (a processor removed the token)
	StepChose   string // the title: {n}, {total}, {token}, {how}
	HowPicked   string // {how} of a scored choice: {by}, {p}, {rank}
	HowPlain    string // {how} when the trace does not say how: {p}, {rank}
	Greedy      string // {by} of a greedy choice
	Sampled     string // ... of a sampled one
	Beam        string // ... of beam search
	Forced      string // {how} of a forced token (no p, no rank)

	// The charts over the steps.
	Step           string // the x axis, and the glyph of a step without a phase
	StepN          string // the current step's marker in the key: {n}
	Top1           string // the confidence chart's upper axis
	Entropy        string // ... its lower axis
	Top1Raw        string // the top-1 line's key
	ChosenFinal    string // the chosen token's rings in the key
	ConfidenceOver string // title without a current step: {n} steps
	ConfidenceAt   string // title at a step: {n}, {total}, {p}, {h}
	KVAxis         string // the KV chart's axis: {unit}
	KVOver         string // title without a current step: {n} steps
	KVHeld         string // the KV line's key
	KVAt           string // title at a step: {n}, {total}, {bytes}, {positions}
	Moved          string // the cost chart's bytes axis: {unit}
	Compute        string // ... its arithmetic axis: {unit}
	Time           string // ... its time axis (milliseconds)
	CostOver       string // title without a current step: {n} steps
	CostAt         string // title at a step: {n}, {total}, {phase}, {bytes}, {flops}, {ms}
	Prefill        string // the phases' glyphs
	Decode         string
	Full           string

	// Names derived for the runs of an overlay (Options.Names wins).
	CacheOn  string
	CacheOff string
	RunN     string // {n}
}

// English returns the charts' English words, which fill any field a
// Words leaves empty.
func English() Words {
	return Words{
		Probability: "probability",
		RawP:        "raw p (softmax of logits)",
		FinalP:      "final p (after processors)",
		Chosen:      "chosen",
		Removed:     "removed",
		StepChose:   `Step {n} of {total}: chose "{token}" ({how})`,
		HowPicked:   "{by}, p {p}, rank {rank}",
		HowPlain:    "p {p}, rank {rank}",
		Greedy:      "greedy",
		Sampled:     "sampled",
		Beam:        "beam",
		Forced:      "forced",

		Step:           "step",
		StepN:          "step {n}",
		Top1:           "top-1 probability",
		Entropy:        "entropy (nats)",
		Top1Raw:        "top-1 p (raw)",
		ChosenFinal:    "chosen token's final p",
		ConfidenceOver: "Confidence over {n} steps",
		ConfidenceAt:   "Step {n} of {total}: top-1 p {p}, entropy {h} nats",
		KVAxis:         "KV cache ({unit})",
		KVOver:         "KV cache over {n} steps",
		KVHeld:         "bytes held after the step",
		KVAt:           "Step {n} of {total}: KV cache {bytes} for {positions} positions",
		Moved:          "moved ({unit})",
		Compute:        "compute ({unit})",
		Time:           "time (ms)",
		CostOver:       "Cost of each of {n} steps",
		CostAt:         "Step {n} of {total} ({phase}): moved {bytes}, {flops}, {ms}\u00a0ms",
		Prefill:        "prefill",
		Decode:         "decode",
		Full:           "full (cache off)",

		CacheOn:  "cache on",
		CacheOff: "cache off",
		RunN:     "run {n}",
	}
}

// fields lists w's texts, in one order for every Words.
func (w *Words) fields() []*string {
	return []*string{
		&w.Probability, &w.RawP, &w.FinalP, &w.Chosen, &w.Removed, &w.StepChose, &w.HowPicked, &w.HowPlain,
		&w.Greedy, &w.Sampled, &w.Beam, &w.Forced,
		&w.Step, &w.StepN, &w.Top1, &w.Entropy, &w.Top1Raw, &w.ChosenFinal, &w.ConfidenceOver, &w.ConfidenceAt,
		&w.KVAxis, &w.KVOver, &w.KVHeld, &w.KVAt, &w.Moved, &w.Compute, &w.Time, &w.CostOver, &w.CostAt,
		&w.Prefill, &w.Decode, &w.Full,
		&w.CacheOn, &w.CacheOff, &w.RunN,
	}
}

// complete returns w with its empty fields in English and every text made
// safe to draw (cleanText).
func (w Words) complete() Words {
	en := English()
	ef := en.fields()
	for i, f := range w.fields() {
		if *f == "" {
			*f = *ef[i]
		}
		*f = cleanText(*f)
	}
	return w
}

// fill replaces each {name} in text with its value; pairs alternate names
// and values. Values are not searched again, so a token "{n}" stays as it is.
func fill(text string, pairs ...string) string {
	old := make([]string, 0, len(pairs))
	for i := 0; i+1 < len(pairs); i += 2 {
		old = append(old, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(old...).Replace(text)
}

// forFormat returns w completed for format f: the PNG cannot fall back to
// other fonts, so a text with a character Liberation Sans lacks reads in
// English there rather than as boxes.
func (w Words) forFormat(f Format) Words {
	w = w.complete()
	if f != PNG {
		return w
	}
	en := English()
	ef := en.fields()
	liberation := newGlyphs(sans)
	for i, p := range w.fields() {
		for _, r := range *p {
			if !liberation.has(r) {
				*p = *ef[i]
				break
			}
		}
	}
	return w
}
