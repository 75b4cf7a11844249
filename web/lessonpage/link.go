package lessonpage

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"tracer/lessons"
)

// linkOptions are the lesson run settings a deep link can carry, in the
// order a link writes them.
var linkOptions = []string{
	"max_new_tokens", "do_sample", "temperature", "top_k", "top_p", "min_p", "repetition_penalty", "num_beams", "use_cache",
}

// linkValue is a setting's value as the run form takes it.
func linkValue(o lessons.Setting) (string, error) {
	if o.Name == "seed" || slices.Contains(linkOptions, o.Name) {
		return o.Value, nil
	}
	return "", fmt.Errorf("setting %s is not one the debugger's form takes", o.Name)
}

// finishLink adds the position and the language and writes the link.
func finishLink(q url.Values, step int, lang string) string {
	if step > 0 {
		q.Set("step", strconv.Itoa(step))
	}
	if lang != lessons.English {
		q.Set("lang", lang)
	}
	return "/?" + q.Encode()
}

// debuggerLink writes the deep link that opens a lesson's run in the
// debugger on the named model (a catalog name), at stepper position step.
// It fails for a setting the debugger's form cannot take.
func debuggerLink(model string, run lessons.Run, step int, lang string) (string, error) {
	q := url.Values{}
	q.Set("model", model)
	if len(run.Prompts) > 0 {
		q.Set("prompt", strings.Join(run.Prompts, "\n"))
	}
	if len(run.Prompts) > 1 && run.Padding == "right" {
		q.Set("padding", "right")
	}
	for _, o := range run.Options {
		v, err := linkValue(o)
		if err != nil {
			return "", err
		}
		q.Set(o.Name, v)
	}
	return finishLink(q, step, lang), nil
}

// compareLink writes the deep link that opens a step's runs as a
// comparison in the debugger: one line of settings per run. It fails when
// the runs differ in what a comparison shares (prompt, padding, seed).
func compareLink(model string, runs []lessons.Run, step int, lang string) (string, error) {
	q := url.Values{}
	q.Set("model", model)
	first := runs[0]
	if len(first.Prompts) > 0 {
		q.Set("prompt", strings.Join(first.Prompts, "\n"))
	}
	var lines []string
	for _, r := range runs {
		switch {
		case !slices.Equal(r.Prompts, first.Prompts):
			return "", fmt.Errorf("runs %q and %q have different prompts", first.ID, r.ID)
		case r.Padding != first.Padding:
			return "", fmt.Errorf("runs %q and %q pad on different sides", first.ID, r.ID)
		case r.Options.Get("seed") != first.Options.Get("seed"):
			return "", fmt.Errorf("runs %q and %q have different seeds", first.ID, r.ID)
		}
		var words []string
		for _, o := range r.Options {
			if o.Name == "seed" {
				continue
			}
			v, err := linkValue(o)
			if err != nil {
				return "", err
			}
			if strings.ContainsAny(v, " \t\n=") {
				return "", fmt.Errorf("run %q: %s %q cannot go in a compare line", r.ID, o.Name, v)
			}
			words = append(words, o.Name+"="+v)
		}
		if len(words) == 0 {
			return "", fmt.Errorf("run %q sets nothing a compare line could say", r.ID)
		}
		lines = append(lines, strings.Join(words, " "))
	}
	if len(first.Prompts) > 1 && first.Padding == "right" {
		q.Set("padding", "right")
	}
	if s := first.Options.Get("seed"); s != "" {
		q.Set("seed", s)
	}
	q.Set("variants", strings.Join(lines, "\n"))
	return finishLink(q, step, lang), nil
}
