package web

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"tracer/trace"
	"tracer/web/internal/testsupport"
	"tracer/web/live"
)

// importable writes tr as an import's bytes.
func importable(t *testing.T, tr *trace.Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := trace.Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestImportIsCheckedForPlausibility: an imported trace is refused, with a
// message naming the limit, before anything is built from it when it
// claims a vocabulary no model has (the what-if panel would allocate
// arrays of that size on every message) or carries more branches than a
// run may grow (its tree would cost every view).
func TestImportIsCheckedForPlausibility(t *testing.T) {
	_, ts := startServer(t, Config{}, nil)
	id, _ := pageAt(t, ts)
	base, err := trace.Decode(testsupport.LoopTrace(t, 4))
	if err != nil {
		t.Fatal(err)
	}

	huge := *base
	huge.Model.VocabSize = 1 << 24
	if code, msg := postTrace(t, ts, id, importable(t, &huge)); code != http.StatusBadRequest || !strings.Contains(msg, "vocabulary of 16777216 tokens") {
		t.Errorf("a trace claiming 16,777,216 tokens: got %d %s, want 400 naming the vocabulary", code, msg)
	}

	for _, n := range []int{DefaultMaxBranches + 1, 60000} {
		many := *base
		many.Branches = make([]trace.Branch, n)
		for i := range many.Branches {
			many.Branches[i] = trace.Branch{ID: i + 1, At: 0, Steps: []trace.Step{}, Output: trace.Output{StopReason: trace.StopCancelled}}
		}
		if code, msg := postTrace(t, ts, id, importable(t, &many)); code != http.StatusBadRequest || !strings.Contains(msg, "--max-branches") {
			t.Errorf("a trace of %d branches: got %d %.300s, want 400 naming --max-branches", n, code, msg)
		}
	}
	ok := *base
	ok.Branches = []trace.Branch{{ID: 1, At: 0, Steps: []trace.Step{}, Output: trace.Output{StopReason: trace.StopCancelled}}}
	if code, msg := postTrace(t, ts, id, importable(t, &ok)); code != http.StatusOK {
		t.Errorf("a plausible trace with a branch: got %d %.300s, want 200", code, msg)
	}
}

// TestBranchesPerRunAreBounded: a run grows at most --max-branches
// branches; past it a branch is refused with a message naming the flag,
// while going to a branch that exists still works.
func TestBranchesPerRunAreBounded(t *testing.T) {
	s, sess, c := liveServer(t, Config{MaxBranches: 2}, 0)
	generate(t, s, c, form{"do_sample": "false"})
	for i, tok := range []string{"</s>", "chai"} {
		sendJSON(t, c, map[string]any{"type": "branch", "step": 0, "token": tok})
		waitFor(t, c, "a branch's end", func(o live.Outbound) bool {
			return finished(o) && len(sessionTrace(sess).Branches) == i+1
		})
	}
	sendJSON(t, c, map[string]any{"type": "select", "branch": 0})
	waitFor(t, c, "the trunk", func(o live.Outbound) bool { return o.Type == live.MsgView })
	sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "token": "</s>"})
	o := waitFor(t, c, "the refusal", func(o live.Outbound) bool { return o.Type == live.MsgError })
	if !strings.Contains(o.Message, "--max-branches") || !strings.Contains(o.Message, "2 branches") {
		t.Errorf("a third branch: got %q, want a refusal naming --max-branches", o.Message)
	}
	if n := len(sessionTrace(sess).Branches); n != 2 {
		t.Errorf("the run has %d branches, want 2", n)
	}
	// The first branch again: it exists, so the page goes there.
	sendJSON(t, c, map[string]any{"type": "branch", "step": 0, "token": "</s>"})
	waitFor(t, c, "the existing branch", func(o live.Outbound) bool {
		return o.Type == live.MsgView && strings.Contains(o.HTML, `data-branch="1" data-testid="branch-active"`)
	})
}

// TestExportsWaitInLine: one-file exports run a few at a time; past the
// line's bound a request is refused with 503, and once the slots free the
// export works again.
func TestExportsWaitInLine(t *testing.T) {
	s, ts := startServer(t, Config{}, nil)
	id, _ := pageAt(t, ts)
	for range cap(s.exports) {
		s.exports <- struct{}{}
	}
	s.exportsWaiting.Store(maxExportQueue)
	get := func() (int, string) {
		res, err := http.Get(ts.URL + "/export?format=html&session=" + id)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, msg := get(); code != http.StatusServiceUnavailable || !strings.Contains(msg, "try again") {
		t.Errorf("an export past the line: got %d %.200s, want 503", code, msg)
	}
	s.exportsWaiting.Store(0)
	for range cap(s.exports) {
		<-s.exports
	}
	if code, msg := get(); code != http.StatusOK || !strings.HasPrefix(msg, "<!doctype html>") {
		t.Errorf("an export with a free slot: got %d %.200s, want the page", code, msg)
	}
}

// TestBranchHeaderNamesTheBranch: on a branch the header names the branch
// and, for a what-if branch, its own settings, not only the parent's.
func TestBranchHeaderNamesTheBranch(t *testing.T) {
	s, _, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"do_sample": "true", "seed": "1"})
	sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "id": 2, "whatif": map[string]any{"temperature": 0.25, "top_k": 3}})
	o := waitFor(t, c, "the branch's end", func(o live.Outbound) bool {
		return finished(o) && strings.Contains(o.HTML, `data-testid="branch-active"`)
	})
	i := strings.Index(o.HTML, `class="source"`)
	if i < 0 {
		t.Fatalf("no header source in the view: %.300s", o.HTML)
	}
	header := o.HTML[i : i+strings.Index(o.HTML[i:], "</span>")]
	if !strings.Contains(header, "step 2 →") || !strings.Contains(header, "T=0.25") {
		t.Errorf("the branch's header says %q, want the branch and its T=0.25", header)
	}
}
