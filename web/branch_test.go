package web

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tracer/trace"
	"tracer/web/live"
)

func TestBranchReusesTheSharedPrefix(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"do_sample": "false"})

	// At step 2 (index 2: after "I love") choose </s> instead of chai.
	sendJSON(t, c, map[string]any{"type": "branch", "step": 2, "token": "</s>"})
	o := waitFor(t, c, "the branch's end", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "branch-tree") })
	if !strings.Contains(o.HTML, `data-testid="branch-active"`) || !strings.Contains(o.HTML, "step 3 → &lt;/s&gt;") {
		t.Errorf("no selected branch in the tree: %.600s", o.HTML)
	}
	tr := sessionTrace(sess)
	if len(tr.Branches) != 1 {
		t.Fatalf("got %d branches, want 1", len(tr.Branches))
	}
	b := tr.Branches[0]
	if b.Parent != 0 || b.At != 2 || len(b.Steps) != 1 || b.Output.NewText != "I love" {
		t.Fatalf("got branch %+v, want one step at 2 ending \"I love\"", b)
	}
	if in := b.Steps[0].Rows[0].InputIDs; len(in) != 1 {
		t.Errorf("the branch's step fed %v: want one token, the shared prefix coming from the cache", in)
	}
	if got := b.Steps[0].Rows[0].Chosen; got.By != trace.ByForced || got.Token != "</s>" {
		t.Errorf("the branch chose %+v, want </s> forced", got)
	}

	// A branch of the branch, by id, at step 1 (eat instead of love).
	sendJSON(t, c, map[string]any{"type": "select", "branch": 0})
	waitFor(t, c, "the trunk", func(o live.Outbound) bool {
		return o.Type == live.MsgView && strings.Contains(o.HTML, `data-branch="0" data-testid="branch-active"`)
	})
	sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "id": 5})
	waitFor(t, c, "the second branch", func(o live.Outbound) bool {
		return finished(o) && strings.Contains(o.HTML, `data-branch="2" data-testid="branch-active"`)
	})
	tr = sessionTrace(sess)
	if len(tr.Branches) != 2 || tr.Branches[1].At != 1 {
		t.Fatalf("got branches %+v, want a second at step 1", tr.Branches)
	}

	// The whole tree exports and imports again.
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	res, err := http.Get(ts.URL + "/export?session=" + sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	back, err := trace.Read(bytes.NewReader(data), 0)
	if err != nil {
		t.Fatalf("the exported tree does not read back: %v", err)
	}
	if len(back.Branches) != 2 || back.Branches[0].Output.NewText != "I love" {
		t.Errorf("export: got %d branches, want the tree of 2", len(back.Branches))
	}
}

func TestBranchErrors(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 20*time.Millisecond)
	generate(t, s, c, form{})
	cases := []struct {
		name, msg, says string
	}{
		{"id outside the vocabulary", `{"type": "branch", "id": 99}`, "token id 99 is outside the vocabulary (0..7)"},
		{"negative id", `{"type": "branch", "id": -1}`, "token id -1 is negative"},
		{"hash id outside", `{"type": "branch", "token": "#8"}`, "outside the vocabulary"},
		{"not a word", `{"type": "branch", "token": "tea"}`, `"tea" is not a token`},
		{"two words", `{"type": "branch", "token": "I love"}`, "encodes to 2 tokens"},
		{"step out of range", `{"type": "branch", "step": 9, "id": 2}`, "cannot branch at step index 9"},
		{"id and token", `{"type": "branch", "id": 2, "token": "I"}`, "exactly one"},
		{"neither", `{"type": "branch"}`, "exactly one"},
		{"no such branch", `{"type": "select", "branch": 4}`, "branch 4 does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := roundTrip(t, c, tc.msg)
			if o.Type != live.MsgError || !strings.Contains(o.Message, tc.says) {
				t.Errorf("got %+v, want an error saying %q", o, tc.says)
			}
		})
	}
	t.Run("while generating", func(t *testing.T) {
		sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "50"}})
		waitFor(t, c, "a running view", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Running })
		sendJSON(t, c, map[string]any{"type": "branch", "step": 0, "id": 2})
		waitFor(t, c, "an error", errorSaying("still generating"))
	})
}

func TestUntilEachBreakpoint(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"do_sample": "false"})
	// The greedy toy run: I (0.9), love (0.7), chai (0.6), </s> (0.8);
	// entropies 0.33, 0.61, 0.67, 0.50 nats.
	cases := []struct {
		name  string
		until map[string]string
		index int
		says  string
	}{
		{"top-1", map[string]string{"top1_below": "0.65"}, 2, "raw top-1 probability (before the processors) is 0.60, below 0.65"},
		{"entropy", map[string]string{"entropy_above": "0.65"}, 2, "entropy is 0.673 nats"},
		{"token", map[string]string{"token": "</s>", "token_top_k": "1"}, 3, "entered the top 1"},
		{"none", map[string]string{"entropy_above": "5"}, 3, "No breakpoint hit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			roundTrip(t, c, `{"type": "first"}`)
			sendJSON(t, c, map[string]any{"type": "until", "until": tc.until})
			o := waitFor(t, c, "the breakpoint", func(o live.Outbound) bool { return o.Type == live.MsgView })
			if o.Index != tc.index || !strings.Contains(o.HTML, tc.says) {
				t.Errorf("got index %d, want %d saying %q; html %.300s", o.Index, tc.index, tc.says, o.HTML)
			}
		})
	}
	t.Run("rank", func(t *testing.T) {
		// Force eat (rank 2) at step 1 on a branch; the rank breakpoint finds it.
		sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "token": "eat"})
		waitFor(t, c, "the branch", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "branch-tree") })
		settle(t, s, c)
		roundTrip(t, c, `{"type": "first"}`)
		o := roundTrip(t, c, `{"type": "until", "until": {"rank_above": "1"}}`)
		if o.Index != 1 || !strings.Contains(o.HTML, "has rank 2, above 1") {
			t.Errorf("got index %d, want 1 with rank 2; html %.300s", o.Index, o.HTML)
		}
	})
	t.Run("bad", func(t *testing.T) {
		for _, tc := range []struct{ msg, says string }{
			{`{"type": "until", "until": {}}`, "no breakpoint set"},
			{`{"type": "until", "until": {"top1_below": "x"}}`, "not a number"},
			{`{"type": "until", "until": {"token": "tea"}}`, "not a token"},
			{`{"type": "until", "until": {"token_top_k": "0", "token": "I"}}`, "at least 1"},
		} {
			if o := roundTrip(t, c, tc.msg); o.Type != live.MsgError || !strings.Contains(o.Message, tc.says) {
				t.Errorf("%s: got %+v, want an error saying %q", tc.msg, o, tc.says)
			}
		}
	})
}

func TestUntilWaitsForLiveSteps(t *testing.T) {
	_, _, c := liveServer(t, Config{}, 2*time.Millisecond)
	// "b" leads after "a" and trails after "b" or "c": it enters the top 1
	// again and again. The breakpoint must wait for steps still to come.
	sendJSON(t, c, map[string]any{"type": "generate", "form": form{"model": "loop", "max_new_tokens": "200"}})
	waitFor(t, c, "a running view", func(o live.Outbound) bool { return o.Type == live.MsgView && o.Running })
	sendJSON(t, c, map[string]any{"type": "until", "until": map[string]string{"token": "b", "token_top_k": "1"}})
	o := waitFor(t, c, "the hit", func(o live.Outbound) bool {
		return o.Type == live.MsgView && strings.Contains(o.HTML, "entered the top 1")
	})
	if o.Index < 1 || !strings.Contains(o.HTML, `data-id="3" data-testid="candidate-active"`) {
		t.Errorf("got the hit at index %d, want a later step choosing b", o.Index)
	}
	sendJSON(t, c, map[string]string{"type": "stop"})
	waitFor(t, c, "the end", finished)
}

func TestBranchWithoutAKeptCache(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"do_sample": "false"})
	sess.Mu.Lock()
	clear(sess.Doc.Runs[0].Caches) // as when the cache was evicted
	sess.Mu.Unlock()
	sendJSON(t, c, map[string]any{"type": "branch", "step": 2, "token": "</s>"})
	waitFor(t, c, "the branch", func(o live.Outbound) bool { return finished(o) && strings.Contains(o.HTML, "branch-tree") })
	settle(t, s, c)
	b := sessionTrace(sess).Branches[0]
	if len(b.Steps) != 1 || b.Steps[0].Index != 2 || b.Output.NewText != "I love" {
		t.Errorf("got branch steps %d from %d, output %q; want one step at 2 ending \"I love\"", len(b.Steps), b.Steps[0].Index, b.Output.NewText)
	}
}
