package live

import (
	"encoding/json"
	"testing"
	"time"

	"tracer/web/runs"
)

// TestLongLineKeepsItsPages: a page far back in a long line for the
// generation slots hears its place as the line moves, and is never taken
// for a stuck page: its place is coalesced (the newest only), not queued
// message by message. Here no write pump drains the pages at all, as when
// a busy server cannot schedule them for a while; with 40 runs ahead, the
// last page used to collect 40 queued messages and be dropped at 16.
func TestLongLineKeepsItsPages(t *testing.T) {
	s := &Protocol{Hub: newHub()}
	var line []*Session
	var pages []*client
	for i := range 41 {
		sess := newSession(string(rune('A'+i)), &runs.Document{}, time.Unix(1000, 0))
		c := newClient(s, sess, nil)
		if !s.Hub.add(c) {
			t.Fatal("the hub refused a page")
		}
		line = append(line, s.queue.join(s, sess))
		pages = append(pages, c)
	}
	last := pages[len(pages)-1]
	for ahead := 39; ahead >= 0; ahead-- {
		s.queue.leave(s, line[len(line)-2-ahead])
	}
	if s.Hub.Count() != len(pages) {
		t.Fatalf("%d pages connected after the line moved, want all %d", s.Hub.Count(), len(pages))
	}
	var m queueMessage
	if err := json.Unmarshal(last.takePlace(), &m); err != nil || m.Type != msgQueue || m.Ahead != 0 {
		t.Errorf("the last page's place: %+v (%v), want a queue message with 0 runs ahead", m, err)
	}
	if p := last.takePlace(); p != nil {
		t.Errorf("a second place %s, want one message for the newest place", p)
	}
	if len(last.send) != 0 {
		t.Errorf("%d messages queued for the last page, want its places coalesced", len(last.send))
	}
	s.queue.leave(s, line[len(line)-1])
	if err := json.Unmarshal(last.takePlace(), &m); err != nil || m.Ahead != -1 {
		t.Errorf("after its run left the line: %+v (%v), want ahead -1", m, err)
	}
}
