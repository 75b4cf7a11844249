package runs

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/web/internal/testsupport"
	"tracer/web/view"
)

// registryPages returns the page fields of the option registry, sorted.
func registryPages() []string {
	var out []string
	for _, op := range engine.Options() {
		if op.Page != "" {
			out = append(out, op.Page)
		}
	}
	sort.Strings(out)
	return out
}

// TestFormOptionsAreTheRegistry walks the option registry: the run form
// the script sends and the form the page renders hold exactly one field
// per option that has a page field, besides the page's own.
func TestFormOptionsAreTheRegistry(t *testing.T) {
	want := registryPages()
	var fields []string
	for name := range (&Form{}).optionFields() {
		fields = append(fields, name)
	}
	sort.Strings(fields)
	if !slices.Equal(fields, want) {
		t.Errorf("runForm's option fields are %v, want the registry's %v", fields, want)
	}

	var html strings.Builder
	if err := view.RunFormPanel(view.FormView{MaxNew: "100"}, testsupport.Words(t, "en")).Render(context.Background(), &html); err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, m := range regexp.MustCompile(`name="([a-z_]+)"`).FindAllStringSubmatch(html.String(), -1) {
		if !slices.Contains(pageOwn, m[1]) && !slices.Contains(rendered, m[1]) {
			rendered = append(rendered, m[1])
		}
	}
	sort.Strings(rendered)
	if !slices.Equal(rendered, want) {
		t.Errorf("the page's run form has option controls %v, want the registry's %v", rendered, want)
	}
}

// TestFormSettingsSetTheirOption checks that each option field of the
// form sets that option, and only it; a compare line may name it (or its
// alias), but for the seed every run shares.
func TestFormSettingsSetTheirOption(t *testing.T) {
	for _, op := range engine.Options() {
		if op.Page == "" {
			continue
		}
		t.Run(op.Page, func(t *testing.T) {
			var f Form
			text := "3"
			switch op.Kind {
			case engine.KindBool:
				text = "false"
			case engine.KindString:
				text = op.DefaultText()
			}
			*f.optionFields()[op.Page] = text
			s, err := f.settings(100)
			if err != nil {
				t.Fatalf("%s=%q: %v", op.Page, text, err)
			}
			for _, other := range engine.Options() {
				if set := other.IsSet(s); set != (other.Name == op.Name) {
					t.Errorf("%s=%q: %s set %v, want only %s set", op.Page, text, other.Name, set, op.Name)
				}
			}
			for _, name := range append([]string{op.Name}, op.Aliases...) {
				dst, _ := f.field(name)
				if got, want := dst != nil, op.Name != "seed"; got != want {
					t.Errorf("a compare line setting %s: accepted %v, want %v", name, got, want)
				}
			}
		})
	}
}

// TestFormField maps a refusal's message to the run form's field it names.
func TestFormField(t *testing.T) {
	for _, tc := range []struct {
		form    Form
		compare bool
		msg     string
		want    string
	}{
		{Form{}, false, "max_new_tokens 100000 is more than this server allows (1024)", "max_new_tokens"},
		{Form{}, false, "temperature must be strictly positive when sampling", "temperature"},
		{Form{}, false, `top_k: "x" is not a whole number`, "top_k"},
		{Form{}, false, `prompt ids, line 1: "x" is not a token id`, "prompt"},
		{Form{}, false, "16 prompts: at most 16, one per line", ""},   // a word, not the field's name
		{Form{}, false, "min_p_extra is set; seed 7", "seed"},         // not min_p: part of a longer name
		{Form{}, false, `model "x" is not on this server's list`, ""}, // the model is not an option
		{Form{}, true, "compare needs at least two lines of settings", "variants"},
		{Form{Variants: "greedy\nT=0.7 top_k=x"}, true, `T=0.7 top_k=x: top_k: "x" is not a whole number`, "variants"},
		{Form{TopK: "x", Variants: "greedy\nT=0.7"}, true, `greedy: top_k: "x" is not a whole number`, "top_k"},
	} {
		if got := FormField(tc.form, tc.compare, tc.msg); got != tc.want {
			t.Errorf("FormField(%q): got %q, want %q", tc.msg, got, tc.want)
		}
	}
}
