package live

import (
	"testing"
	"time"

	"tracer/web/runs"
)

func TestStoreExpiresAndEvicts(t *testing.T) {
	now := time.Unix(1000, 0)
	st := newStore(2, time.Hour)
	st.now = func() time.Time { return now }
	doc := &runs.Document{}

	a, _ := st.Create(doc, nil)
	now = now.Add(time.Minute)
	b, _ := st.Create(doc, nil)
	now = now.Add(time.Minute)
	if _, ok := st.Get(a.ID); !ok { // a is now the most recently used
		t.Fatal("session a is missing")
	}
	c, _ := st.Create(doc, nil) // full: b, the least recently used, makes room
	if _, ok := st.Get(b.ID); ok {
		t.Error("got session b, want it evicted")
	}
	if st.Len() != 2 {
		t.Errorf("got %d sessions, want 2", st.Len())
	}
	now = now.Add(2 * time.Hour)
	for _, s := range []*Session{a, c} {
		if _, ok := st.Get(s.ID); ok {
			t.Errorf("got session %s after its ttl, want it expired", s.ID)
		}
	}
	if _, ok := st.Get(""); ok {
		t.Error("got a session for the empty id")
	}
}
