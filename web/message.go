package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Message types a page sends over the WebSocket. Each message is a small
// JSON object, {"type": "next"} or {"type": "step", "index": 3}.
const (
	msgFirst = "first" // go to the first position
	msgPrev  = "prev"  // one back (stays at the first)
	msgNext  = "next"  // one on (stays at the last)
	msgLast  = "last"  // go to the last position
	msgStep  = "step"  // go to position "index"; out of range is an error
	msgView  = "view"  // send the current position again (after connecting)
)

// Message types the server sends.
const (
	msgError = "error" // {"type": "error", "message": "..."}
	// msgView also answers: {"type": "view", "index": 3, "count": 10, "html": "..."}
)

// inbound is a message from a page.
type inbound struct {
	Type  string `json:"type"`
	Index *int   `json:"index,omitempty"`
}

// outbound is a message to a page: a rendered view or an error.
type outbound struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Count   int    `json:"count"`
	HTML    string `json:"html,omitempty"`
	Message string `json:"message,omitempty"`
}

// parseInbound reads and checks one message from a page. It accepts exactly
// one JSON object of a known type with the fields that type takes.
func parseInbound(data []byte) (inbound, error) {
	var m inbound
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf(`bad message: want a JSON object like {"type": "next"}: %v`, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return m, errors.New("bad message: extra data after the JSON object")
	}
	switch m.Type {
	case msgFirst, msgPrev, msgNext, msgLast, msgView:
		if m.Index != nil {
			return m, fmt.Errorf("bad message: %q takes no index", m.Type)
		}
	case msgStep:
		if m.Index == nil {
			return m, errors.New(`bad message: "step" needs an index, e.g. {"type": "step", "index": 3}`)
		}
	case "":
		return m, errors.New(`bad message: no "type"`)
	default:
		return m, fmt.Errorf("bad message: unknown type %.40q (want first, prev, next, last, step or view)", m.Type)
	}
	return m, nil
}

// errorMessage encodes an error reply.
func errorMessage(text string) []byte {
	b, _ := json.Marshal(outbound{Type: msgError, Message: text})
	return b
}
