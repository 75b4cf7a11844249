package web

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tracer/trace"
	"tracer/web/live"
)

// A comparison's Export holds every run; each run's own link downloads
// under its own name; the raw logits kept for the what-if stay out.
func TestCompareExportsEveryRun(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	sendJSON(t, c, map[string]any{"type": "compare", "form": form{"seed": "1", "variants": "greedy\nT=0.7\nT=1.2"}})
	waitFor(t, c, "the comparison's end", finished)
	o := settle(t, s, c)
	for _, want := range []string{`download="tracer-run-1-greedy.json"`, `download="tracer-run-2-T=0.7.json"`, `download="tracer-run-3-T=1.2.json"`} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the comparison has no link %s", want)
		}
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	get := func(t *testing.T, q string) (*http.Response, []byte) {
		t.Helper()
		res, err := http.Get(ts.URL + "/export?session=" + sess.ID + q)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, body := get(t, "")
	if cd := res.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="tracer-compare.zip"`) {
		t.Fatalf("Export: got %q, want tracer-compare.zip", cd)
	}
	z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("Export is not a zip: %v", err)
	}
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
		r, _ := f.Open()
		tr, err := trace.Read(r, 0)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if tr.Options.FullLogits || len(tr.Steps) == 0 || tr.Steps[0].Rows[0].Logits != nil {
			t.Errorf("%s keeps the what-if's raw logits", f.Name)
		}
	}
	if got := strings.Join(names, " "); got != "run-1-greedy.json run-2-T=0.7.json run-3-T=1.2.json" {
		t.Errorf("zip entries: got %s", got)
	}
	res, _ = get(t, "&run=2")
	if cd := res.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="tracer-run-3-T=1.2.json"`) {
		t.Errorf("run 2: got %q", cd)
	}
	if res, _ := get(t, "&run=-1"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("run=-1: got %d, want 400", res.StatusCode)
	}
	if res, _ := get(t, "&run=9"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("run=9: got %d, want 400", res.StatusCode)
	}
}

// Branching to the token the path already chose goes to that path; a
// second branch to a token chosen before goes to the first one.
func TestBranchToAChosenTokenGoesThere(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	generate(t, s, c, form{"model": "toy", "do_sample": "false"}) // I love chai </s>
	cases := []struct {
		name     string
		msg      map[string]any
		branches int // in the tree afterwards
		branch   int // followed
		pos      int
	}{
		{"the trunk's own token", map[string]any{"type": "branch", "step": 1, "token": "love"}, 0, 0, 1},
		{"a new token", map[string]any{"type": "branch", "step": 1, "token": "eat"}, 1, 1, 1},
		{"the new token again, from the trunk", map[string]any{"type": "branch", "step": 1, "id": 5}, 1, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sendJSON(t, c, map[string]any{"type": "select", "branch": 0})
			sendJSON(t, c, tc.msg)
			// Messages are answered in order: this one's error comes once
			// the branch message has been handled (and any run it starts
			// counted, so the wait below cannot miss it).
			sendJSON(t, c, map[string]any{"type": "step", "index": 999})
			waitFor(t, c, "the marker's error", errorSaying("out of range"))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.WaitJobs(ctx); err != nil {
				t.Fatal(err)
			}
			tr := sessionTrace(sess)
			sess.Mu.Lock()
			cur := sess.Cur
			sess.Mu.Unlock()
			if len(tr.Branches) != tc.branches || cur.Branch != tc.branch || cur.Pos != tc.pos {
				t.Errorf("got %d branches, at branch %d step %d; want %d, %d, %d", len(tr.Branches), cur.Branch, cur.Pos, tc.branches, tc.branch, tc.pos)
			}
		})
	}
	// A what-if branch continues with its settings, labelled with them,
	// even from the token the trunk chose.
	sendJSON(t, c, map[string]any{"type": "select", "branch": 0})
	settle(t, s, c)
	sendJSON(t, c, map[string]any{"type": "branch", "step": 1, "id": 4, "whatif": map[string]any{"temperature": 0.5, "top_k": 3}})
	waitFor(t, c, "the what-if branch's end", func(o live.Outbound) bool {
		return finished(o) && strings.Contains(o.HTML, `data-branch="2" data-testid="branch-active"`)
	})
	tr := sessionTrace(sess)
	if len(tr.Branches) != 2 || !strings.HasSuffix(tr.Branches[1].Label, "(T=0.5 top_k=3)") {
		t.Fatalf("what-if branch: got %+v", tr.Branches)
	}
	if st := tr.Branches[1].Steps; len(st) < 2 || st[1].Rows[0].Chosen.By != trace.BySample {
		t.Errorf("the what-if branch's next step was not sampled: %+v %+v", st, tr.Branches[1].Output)
	}
}
