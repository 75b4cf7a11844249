package lessonpage

import (
	"net/url"
	"strings"
	"testing"

	"tracer/lessons"
	"tracer/web/runs"
)

// TestDebuggerLinkEveryRun checks that every run of every lesson has a
// link into the debugger that reads back as the run's own settings, and
// that a step of runs that share a prompt has a comparison link.
func TestDebuggerLinkEveryRun(t *testing.T) {
	cat, err := lessons.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range cat.Lessons {
		for _, st := range l.Steps {
			for _, run := range st.Runs {
				t.Run(l.ID+"/"+st.ID+"/"+run.ID, func(t *testing.T) {
					link, err := debuggerLink("m", run, 3, lessons.Hindi)
					if err != nil {
						t.Fatalf("got %v, want a link", err)
					}
					u, err := url.Parse(link)
					if err != nil {
						t.Fatal(err)
					}
					f, step, err := runs.LinkForm(u.Query())
					if err != nil {
						t.Fatalf("the link %s reads back with %v", link, err)
					}
					if f.Model != "m" || step != 3 || f.Prompt != strings.Join(run.Prompts, "\n") || u.Query().Get("lang") != "hi" {
						t.Errorf("got model %q, step %d, prompt %q, lang %q; want m, 3, %q, hi", f.Model, step, f.Prompt, u.Query().Get("lang"), strings.Join(run.Prompts, "\n"))
					}
					for _, o := range run.Options {
						if got := u.Query().Get(o.Name); got != o.Value {
							t.Errorf("%s: got %q, want %q", o.Name, got, o.Value)
						}
					}
				})
			}
			if len(st.Runs) > 1 && st.Runs[0].Padding == st.Runs[1].Padding {
				if _, err := compareLink("m", st.Runs, 0, lessons.English); err != nil {
					t.Errorf("%s/%s: got %v, want a comparison link", l.ID, st.ID, err)
				}
			}
		}
	}
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
		form, gotStep, err := runs.LinkForm(u.Query())
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
