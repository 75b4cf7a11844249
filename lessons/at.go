package lessons

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// AtKind says what part of its runs a step shows.
type AtKind string

// The kinds of At, as written in the lesson files ("step:2", "each-moment").
const (
	AtNone       AtKind = ""            // no run, or the run as a whole
	AtBefore     AtKind = "before"      // the setup: prompt, table, listing; nothing generated yet
	AtStep       AtKind = "step"        // one step of the trace: At.Index
	AtEachStep   AtKind = "each-step"   // the page steps through every step of the trace
	AtEnd        AtKind = "end"         // the finished run: output and stop reason
	AtMoment     AtKind = "moment"      // one moment of the toy's walkthrough (Walk): At.Index
	AtEachMoment AtKind = "each-moment" // the page steps through every moment of the walkthrough
)

// At is the place in a step's runs the step shows. Index counts from 0:
// a trace step (trace.Trace.Steps) for AtStep, a moment
// (Walkthrough.Moments) for AtMoment.
type At struct {
	Kind  AtKind
	Index int
}

// String writes At as the lesson files do: "end", "step:2", "moment:5".
func (a At) String() string {
	if a.Kind == AtStep || a.Kind == AtMoment {
		return string(a.Kind) + ":" + strconv.Itoa(a.Index)
	}
	return string(a.Kind)
}

// ParseAt reads an At as the lesson files write it.
func ParseAt(s string) (At, error) {
	if kind, n, ok := strings.Cut(s, ":"); ok {
		k := AtKind(kind)
		if k != AtStep && k != AtMoment {
			return At{}, fmt.Errorf("at %q: only step:N and moment:N take an index", s)
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 {
			return At{}, fmt.Errorf("at %q: want a step or moment index of 0 or more", s)
		}
		return At{Kind: k, Index: i}, nil
	}
	switch k := AtKind(s); k {
	case AtNone, AtBefore, AtEachStep, AtEnd, AtEachMoment:
		return At{Kind: k}, nil
	case AtStep, AtMoment:
		return At{}, fmt.Errorf("at %q: want %s:N with an index", s, s)
	}
	return At{}, fmt.Errorf("at %q: want before, step:N, each-step, end, moment:N or each-moment", s)
}

// MarshalJSON writes At as a string.
func (a At) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// UnmarshalJSON reads At from a string.
func (a *At) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("at: want a string such as \"step:0\" or \"end\", got %s", data)
	}
	v, err := ParseAt(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// IsZero reports whether At is AtNone (for the omitzero JSON tag).
func (a At) IsZero() bool { return a.Kind == AtNone }
