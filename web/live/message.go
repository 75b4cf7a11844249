package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"tracer/web/runs"
)

// Every message a page may send, and what it gets back:
//
//	page sends (type, fields)                  server answers
//	first, prev, next, last; step {index};     view {seq, index, count, running, html} to every page
//	  select {branch}; row {index};              of the session (and the class's stream when the
//	  until {until}; branch {step?, id|token,    instructor moves); error {message} to the sender only
//	  whatif?}; stop
//	generate {form}; compare {form}            as above, then a view per step as it arrives, queue
//	                                             {ahead} while the run waits for a slot (-1 once it
//	                                             starts), a last view, and error if the run failed
//	                                             ({shown: true} when the view's status shows it); a
//	                                             run refused before it starts: error {refused: true,
//	                                             field?} (the form's field the message names), no view
//	view                                       view to the sender; a follower's stream starts over (cast)
//	pair {on}; charts {on, dark?}              view to the session's pages (allowed while following)
//	detach; rejoin                             view (the page's own copy, or the instructor's again)
//	recall (the instructor)                    view; every detached student follows again (its
//	                                             pages take the stream from its start)
//	whatif {whatif?}                           whatif {html, settings?} to the sender only
//	pull {repo}                                progress {message} ..., then pulled {message} or error
//	(the server, unasked)                      expired (the session is gone: close 1008); class {...}
//	                                             to the instructor every second, and quiz {html} when
//	                                             the students' quiz answers change; cast to followers
//
// Message types a page sends over the WebSocket. Each message is a small
// JSON object, {"type": "next"} or {"type": "step", "index": 3}.
const (
	msgFirst    = "first"    // go to the first position
	msgPrev     = "prev"     // one back (stays at the first)
	msgNext     = "next"     // one on (stays at the last)
	msgLast     = "last"     // go to the last position
	msgStep     = "step"     // go to position "index"; out of range is an error
	MsgView     = "view"     // send the current position again (after connecting)
	MsgGenerate = "generate" // run "form" on the page, streaming its steps
	MsgCompare  = "compare"  // run "form" once per line of its variants, on one random stream
	msgStop     = "stop"     // cancel the generation in progress
	msgSelect   = "select"   // follow branch "branch" (0 = the trunk)
	MsgBranch   = "branch"   // at step "step" (default: the current one) choose "id" or "token" and continue
	msgUntil    = "until"    // play until one of the breakpoints in "until" hits
	msgRow      = "row"      // show batch row (or beam) "index"
	msgPair     = "pair"     // "on": show the toy's step beside a real run
	msgCharts   = "charts"   // "on": render the charts panel; "dark": in the dark palette
	msgDetach   = "detach"   // classroom: stop following the instructor
	msgRejoin   = "rejoin"   // classroom: follow the instructor again
	msgRecall   = "recall"   // classroom, the instructor: bring every detached student back
	msgPull     = "pull"     // download "repo" (ORG/NAME[@REVISION]) into the Hugging Face cache
	MsgWhatIf   = "whatif"   // re-sample the current step with "whatif" settings; answered with a "whatif" message
)

// Message types the server sends.
const (
	MsgError    = "error"    // {"type": "error", "message": "..."}
	MsgProgress = "progress" // a download's progress: {"type": "progress", "message": "config.json 12 kB of 12 kB"}
	MsgPulled   = "pulled"   // a download finished: {"type": "pulled", "message": "ORG/NAME"}
	MsgExpired  = "expired"  // the page's session is gone: the page reloads for a fresh one
	msgQueue    = "queue"    // the page's run waits for a generation slot: {"type": "queue", "ahead": 3} runs ahead of it
	// live.MsgCast ("cast"): a follower's stream of the instructor's views
	// (web/live): fragments and views it lacks, then the cursor.
	// msgClass ("class"): the instructor's page hears of the class every
	// second: following, detached, behind, ahead, positions (cast.go).
	// msgView also answers: {"type": "view", "seq": 7, "index": 3, "count": 10,
	// "running": false, "html": "..."}. seq grows with every view the server
	// builds, so a page ignores a view older than the one it shows.
)

// inbound is a message from a page.
type inbound struct {
	Type   string           `json:"type"`
	Index  *int             `json:"index,omitempty"`
	Form   *runs.Form       `json:"form,omitempty"`
	Branch *int             `json:"branch,omitempty"`
	Step   *int             `json:"step,omitempty"`
	ID     *int             `json:"id,omitempty"`
	Token  *string          `json:"token,omitempty"`
	On     *bool            `json:"on,omitempty"`
	Dark   *bool            `json:"dark,omitempty"`
	Until  *runs.UntilForm  `json:"until,omitempty"`
	Repo   *string          `json:"repo,omitempty"`
	WhatIf *runs.WhatIfForm `json:"whatif,omitempty"`
}

// Fields names the optional fields m carries.
func (m inbound) Fields() []string {
	var f []string
	for _, x := range []struct {
		name string
		set  bool
	}{
		{"index", m.Index != nil}, {"form", m.Form != nil}, {"branch", m.Branch != nil},
		{"step", m.Step != nil}, {"id", m.ID != nil}, {"token", m.Token != nil},
		{"on", m.On != nil}, {"dark", m.Dark != nil}, {"until", m.Until != nil}, {"repo", m.Repo != nil},
		{"whatif", m.WhatIf != nil},
	} {
		if x.set {
			f = append(f, x.name)
		}
	}
	return f
}

// fieldSpec is what a message type takes: the optional fields it accepts
// and those it needs.
type fieldSpec struct{ Takes, needs []string }

// MessageFields returns the fields of a message type, and false for an
// unknown type.
func MessageFields(typ string) (fieldSpec, bool) {
	switch typ {
	case msgFirst, msgPrev, msgNext, msgLast, MsgView, msgStop, msgDetach, msgRejoin, msgRecall:
		return fieldSpec{}, true
	case msgStep, msgRow:
		return fieldSpec{[]string{"index"}, []string{"index"}}, true
	case MsgGenerate, MsgCompare:
		return fieldSpec{[]string{"form"}, []string{"form"}}, true
	case msgSelect:
		return fieldSpec{[]string{"branch"}, []string{"branch"}}, true
	case MsgBranch:
		return fieldSpec{[]string{"step", "id", "token", "whatif"}, nil}, true
	case MsgWhatIf:
		return fieldSpec{[]string{"whatif"}, nil}, true
	case msgUntil:
		return fieldSpec{[]string{"until"}, []string{"until"}}, true
	case msgPair:
		return fieldSpec{[]string{"on"}, []string{"on"}}, true
	case msgCharts:
		return fieldSpec{[]string{"on", "dark"}, []string{"on"}}, true
	case msgPull:
		return fieldSpec{[]string{"repo"}, []string{"repo"}}, true
	}
	return fieldSpec{}, false
}

// knownTypes lists the message types, for error messages.
func knownTypes() string {
	return strings.Join([]string{MsgBranch, msgCharts, MsgCompare, msgDetach, msgFirst, MsgGenerate, msgLast, msgNext,
		msgPair, msgPrev, msgPull, msgRecall, msgRejoin, msgRow, msgSelect, msgStep, msgStop, msgUntil, MsgView, MsgWhatIf}, ", ")
}

// ParseInbound reads and checks one message from a page. It accepts exactly
// one JSON object of a known type with the fields that type takes.
func ParseInbound(data []byte) (inbound, error) {
	var m inbound
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf(`bad message: want a JSON object like {"type": "next"}: %v`, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return m, errors.New("bad message: extra data after the JSON object")
	}
	if m.Type == "" {
		return m, errors.New(`bad message: no "type"`)
	}
	spec, ok := MessageFields(m.Type)
	if !ok {
		return m, fmt.Errorf("bad message: unknown type %.40q (want one of %s)", m.Type, knownTypes())
	}
	have := m.Fields()
	for _, f := range have {
		if !slices.Contains(spec.Takes, f) {
			if f == "index" && len(spec.Takes) == 0 {
				return m, fmt.Errorf("bad message: %q takes no index", m.Type)
			}
			return m, fmt.Errorf("bad message: %q takes no %q", m.Type, f)
		}
	}
	for _, f := range spec.needs {
		if !slices.Contains(have, f) {
			what := strconv.Quote(f)
			if f == "index" {
				what = "an index"
			}
			return m, fmt.Errorf(`bad message: %q needs %s, e.g. %s`, m.Type, what, example(m.Type))
		}
	}
	if m.Type == MsgBranch && (m.ID == nil) == (m.Token == nil) {
		return m, errors.New(`bad message: "branch" needs exactly one of "id" or "token", e.g. {"type": "branch", "id": 5}`)
	}
	return m, nil
}

// example shows a well-formed message of a type.
func example(typ string) string {
	switch typ {
	case msgStep, msgRow:
		return fmt.Sprintf(`{"type": %q, "index": 3}`, typ)
	case msgSelect:
		return `{"type": "select", "branch": 1}`
	case msgPair, msgCharts:
		return fmt.Sprintf(`{"type": %q, "on": true}`, typ)
	case msgUntil:
		return `{"type": "until", "until": {"top1_below": "0.5"}}`
	case msgPull:
		return `{"type": "pull", "repo": "HuggingFaceTB/SmolLM2-135M-Instruct"}`
	}
	return fmt.Sprintf(`{"type": %q, "form": {"model": "toy"}}`, typ)
}

// Outbound is a message to a page: a rendered view or an error.
type Outbound struct {
	Type    string `json:"type"`
	Seq     uint64 `json:"seq,omitempty"`
	Index   int    `json:"index"`
	Count   int    `json:"count"`
	Running bool   `json:"running,omitempty"`
	HTML    string `json:"html,omitempty"`
	Message string `json:"message,omitempty"`
	// An error's kind: Refused, the page's generate or compare was refused
	// before its run started (the run form is to fix: Field names the
	// form's field the message names, if any); Shown, a run failed and the
	// view's status shows why already.
	Refused bool   `json:"refused,omitempty"`
	Field   string `json:"field,omitempty"`
	Shown   bool   `json:"shown,omitempty"`
}

// ErrorMessage encodes an error reply.
func ErrorMessage(text string) []byte {
	b, _ := json.Marshal(Outbound{Type: MsgError, Message: text})
	return b
}

// refusedMessage encodes the error of a run refused before it started,
// about the run form's field (or "").
func refusedMessage(text, field string) []byte {
	b, _ := json.Marshal(Outbound{Type: MsgError, Message: text, Refused: true, Field: field})
	return b
}

// failedMessage encodes the error of a run that failed; shown says the
// run's view shows it.
func failedMessage(text string, shown bool) []byte {
	b, _ := json.Marshal(Outbound{Type: MsgError, Message: text, Shown: shown})
	return b
}
