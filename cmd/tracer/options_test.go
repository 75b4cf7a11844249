package main

import (
	"flag"
	"io"
	"regexp"
	"slices"
	"sort"
	"testing"

	"tracer/engine"
)

// runOwnFlags are tracer run's flags that are not generation options: the
// model, the prompt and where the trace goes.
var runOwnFlags = []string{"model", "prompt", "prompt-ids", "chat", "system", "json", "out", "max-rows-beams", "max-run-mib", "quantize"}

// TestRunFlagsAreTheOptions walks the option registry: tracer run's help
// lists exactly one flag per option that has one, besides its own.
func TestRunFlagsAreTheOptions(t *testing.T) {
	out, errOut, code := tracer(t, "", "run", "-h")
	if code != exitOK {
		t.Fatalf("run -h: exit %d, stderr %q", code, errOut)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(out, -1) {
		if !slices.Contains(runOwnFlags, m[1]) {
			got = append(got, m[1])
		}
	}
	var want []string
	for _, op := range engine.Options() {
		if op.Flag != "" {
			want = append(want, op.Flag)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("run's option flags are %v, want the registry's %v", got, want)
	}
}

// TestOptionFlagsSetTheirOption checks that every option's flag sets that
// option, and only it, in the user's settings layer.
func TestOptionFlagsSetTheirOption(t *testing.T) {
	for _, op := range engine.Options() {
		if op.Flag == "" {
			continue
		}
		t.Run(op.Flag, func(t *testing.T) {
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			g := addOptionFlags(fs, func(engine.Option) bool { return true })
			args := []string{"--" + op.Flag}
			switch {
			case op.Kind == engine.KindBool || op.FlagAlone:
			case op.Kind == engine.KindString:
				args = append(args, op.DefaultText())
			default:
				args = append(args, "3")
			}
			if err := fs.Parse(args); err != nil {
				t.Fatalf("parse %q: %v", args, err)
			}
			s, _ := g.settings()
			for _, other := range engine.Options() {
				if set := other.IsSet(s); set != (other.Name == op.Name) {
					t.Errorf("%q: %s set %v, want only %s set", args, other.Name, set, op.Name)
				}
			}
			if op.Negated && *s.UseCache {
				t.Errorf("%q: use_cache true, want the flag to turn it off", args)
			}
		})
	}
}
