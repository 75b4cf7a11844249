package main

import (
	"fmt"
	"strconv"
	"strings"

	"tracer/engine"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseIDs reads "1,2,3" (one prompt) or "1,2,3;4,5" (a batch).
func parseIDs(s string) ([][]int, error) {
	var rows [][]int
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("empty prompt in %q: separate ids with commas and prompts with semicolons", s)
		}
		var row []int
		for _, f := range strings.Split(part, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("%q is not a token id", strings.TrimSpace(f))
			}
			row = append(row, n)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// attentionFlag is --record-attention for commands that take it alone
// (bench): given alone it records each step's new query ("step");
// --record-attention=all also the prompt's matrices. It reads its value as
// the option's own flag does.
type attentionFlag string

func (a *attentionFlag) String() string { return string(*a) }

// IsBoolFlag lets the flag stand alone, as a boolean flag does.
func (a *attentionFlag) IsBoolFlag() bool { return true }

func (a *attentionFlag) Set(v string) error {
	op, _ := engine.LookupOption("record_attention")
	var s engine.Settings
	if err := op.Parse(&s, v); err != nil {
		return optionFlagError(err, v)
	}
	*a = attentionFlag(*s.RecordAttention)
	return nil
}
