package web

import (
	"net/url"
	"testing"

	"tracer/lessons"
)

// FuzzLinkForm reads arbitrary deep-link queries: no panic, and what it
// accepts is exactly what the query says.
func FuzzLinkForm(f *testing.F) {
	for _, s := range []string{
		"model=toy",
		"model=stories260K%2Fstories260K.bin&prompt=Once+upon&seed=7&max_new_tokens=5&step=3&lang=hi",
		"model=m&variants=greedy%0AT%3D0.7&seed=1",
		"model=toy&colour=red",
		"model=toy&seed=1&seed=2",
		"model=toy&step=-1",
		"%zz&model",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		form, step, err := linkForm(q)
		if err != nil {
			return
		}
		if step < 0 {
			t.Errorf("got step %d, want 0 or more", step)
		}
		for name, got := range map[string]string{
			"model": form.Model, "prompt": form.Prompt, "seed": form.Seed, "temperature": form.Temperature,
			"variants": form.Variants, "use_cache": form.UseCache, "padding": form.Padding,
		} {
			if want := q.Get(name); got != want {
				t.Errorf("%s: got %q, want %q", name, got, want)
			}
		}
	})
}

// FuzzDebuggerLink writes links for runs with arbitrary prompts and
// values: each reads back as the same run.
func FuzzDebuggerLink(f *testing.F) {
	f.Add("Once upon a time", "0.7", "7", 0)
	f.Add("a & b = c\n?d#e", "1e-3", "18446744073709551615", 12)
	f.Add("", "", "", -3)
	f.Fuzz(func(t *testing.T, prompt, temperature, seed string, step int) {
		run := lessons.Run{ID: "r", Model: lessons.ModelReal, Options: lessons.Options{{Name: "temperature", Value: temperature}, {Name: "seed", Value: seed}}}
		if prompt != "" {
			run.Prompts = []string{prompt}
		}
		link, err := debuggerLink("m/x.bin", run, step, lessons.Hindi)
		if err != nil {
			t.Fatalf("got %v for settings the form takes", err)
		}
		u, err := url.Parse(link)
		if err != nil {
			t.Fatalf("the link %q does not parse: %v", link, err)
		}
		form, gotStep, err := linkForm(u.Query())
		if err != nil {
			t.Fatalf("the link %q reads back with %v", link, err)
		}
		wantStep := max(step, 0)
		if form.Model != "m/x.bin" || form.Prompt != prompt || form.Temperature != temperature || form.Seed != seed || gotStep != wantStep {
			t.Errorf("got model %q, prompt %q, temperature %q, seed %q, step %d; want m/x.bin, %q, %q, %q, %d",
				form.Model, form.Prompt, form.Temperature, form.Seed, gotStep, prompt, temperature, seed, wantStep)
		}
	})
}
