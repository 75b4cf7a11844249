package web

import (
	"testing"
	"time"
)

func TestStoreExpiresAndEvicts(t *testing.T) {
	now := time.Unix(1000, 0)
	st := newStore(2, time.Hour)
	st.now = func() time.Time { return now }
	doc := &document{}

	a, _ := st.create(doc, nil)
	now = now.Add(time.Minute)
	b, _ := st.create(doc, nil)
	now = now.Add(time.Minute)
	if _, ok := st.get(a.id); !ok { // a is now the most recently used
		t.Fatal("session a is missing")
	}
	c, _ := st.create(doc, nil) // full: b, the least recently used, makes room
	if _, ok := st.get(b.id); ok {
		t.Error("got session b, want it evicted")
	}
	if st.len() != 2 {
		t.Errorf("got %d sessions, want 2", st.len())
	}
	now = now.Add(2 * time.Hour)
	for _, s := range []*session{a, c} {
		if _, ok := st.get(s.id); ok {
			t.Errorf("got session %s after its ttl, want it expired", s.id)
		}
	}
	if _, ok := st.get(""); ok {
		t.Error("got a session for the empty id")
	}
}
