package web

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"tracer/web/live"
)

// FuzzMessage feeds arbitrary bytes to what answers a page's WebSocket
// message: the decoder, then the dispatch on a fresh page's session,
// outside the recovery boundary so that a panic fails the fuzz (and one in
// a run's goroutine shows in the log). The property: no panic, no hang
// (each input's runs end within a bound), bounded memory (small limits),
// a message either refused with "bad message" or of a known type carrying
// only the fields it takes, and afterwards the page's position inside its
// document and its view rendering.
func FuzzMessage(f *testing.F) {
	for _, m := range chaosMessages {
		f.Add([]byte(m))
	}
	for _, m := range []string{
		`{"type": "generate", "form": {"model": "toy", "input": "ids", "prompt": "0 1\n2", "num_beams": "2", "max_new_tokens": "3"}}`,
		`{"type": "compare", "form": {"model": "toy", "seed": "18446744073709551615", "variants": "greedy\ndo_sample=true T=2 min_p=0.1"}}`,
		`{"type": "until", "until": {"top1_below": "0.5", "rank_above": "1", "entropy_above": "0.1", "token": "love", "token_top_k": "3"}}`,
		`{"type": "branch", "id": 2}`, `{"type": "select", "branch": 0}`, `{"type": "row", "index": 0}`,
	} {
		f.Add([]byte(m))
	}
	var log lockedBuffer
	s, err := New(Config{MaxNewTokens: 20, MaxSessions: 8, Generations: 1, MaxRunBytes: 8 << 20, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := live.ParseInbound(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bad message") {
				t.Errorf("a refused message's error %q does not start with \"bad message\"", err)
			}
			return
		}
		spec, ok := live.MessageFields(m.Type)
		if !ok {
			t.Fatalf("accepted unknown type %q", m.Type)
		}
		for _, name := range m.Fields() {
			if !slices.Contains(spec.Takes, name) {
				t.Errorf("accepted %q with field %q it does not take", m.Type, name)
			}
		}
		d, err := s.FirstRun(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sess, err := s.Sessions.Create(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		logged := len(log.String())
		err = s.Apply(sess, m)
		if err != nil && err.Error() == "" {
			t.Errorf("%s: an empty error", data)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.WaitJobs(ctx); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		sess.Mu.Lock()
		n, pos := sess.Doc.Count(sess.Cur.Branch), sess.Cur.Pos
		sess.Mu.Unlock()
		if pos < 0 || pos >= n {
			t.Errorf("%s: the page stands at %d of %d positions", data, pos, n)
		}
		if msg, _ := s.ViewMessage(sess); !strings.HasPrefix(string(msg), `{"type":"view"`) {
			t.Errorf("%s: the view does not render: %.200s", data, msg)
		}
		if l := log.String()[logged:]; strings.Contains(l, "recovered from a panic") {
			t.Fatalf("%s: a run panicked:\n%.3000s", data, l)
		}
	})
}
