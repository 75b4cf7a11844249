package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
)

// divergentSeed returns a seed on which the toy sampled at temperature 1.2
// leaves the greedy path, and the step where it does.
func divergentSeed(t *testing.T) (seed uint64, step int) {
	t.Helper()
	m, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	greedy := []int{2, 4, 6, 1} // I love chai </s>
	for seed = range 100 {
		yes, temp := true, 1.2
		req, err := m.Request(models.Input{}, &engine.Settings{DoSample: &yes, Temperature: &temp, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := engine.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range tr.Output.NewIDs {
			if i >= len(greedy) || id != greedy[i] {
				return seed, i
			}
		}
	}
	t.Fatal("no seed in 0..99 leaves the greedy path")
	return 0, 0
}

func TestCompareDivergence(t *testing.T) {
	s, sess, c := liveServer(t, Config{}, 0)
	seed, div := divergentSeed(t)
	sendJSON(t, c, map[string]any{"type": "compare", "form": form{"seed": strconv.FormatUint(seed, 10), "variants": "greedy\nT=0.7\nT=1.2"}})
	waitFor(t, c, "the comparison's end", finished)
	o := settle(t, s, c)
	for _, want := range []string{
		`data-testid="compare"`, fmt.Sprintf(`data-divergence="%d"`, div), `data-testid="divergence"`,
		fmt.Sprintf("The runs first differ at step %d", div+1), `data-testid="tv"`,
	} {
		if !strings.Contains(o.HTML, want) {
			t.Errorf("the comparison has no %s", want)
		}
	}
	sess.Mu.Lock()
	runs := sess.Doc.Runs
	labels := []string{runs[0].Label, runs[1].Label, runs[2].Label}
	opts := runs[2].Trace.Options
	sess.Mu.Unlock()
	if labels[0] != "greedy" || labels[2] != "T=1.2" || !opts.DoSample || opts.Temperature != 1.2 || opts.Seed != seed {
		t.Errorf("got runs %q with options %+v, want greedy, T=0.7, T=1.2 sampling on seed %d", labels, opts, seed)
	}

	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for k, status := range map[string]int{"2": http.StatusOK, "3": http.StatusBadRequest, "x": http.StatusBadRequest} {
		res, err := http.Get(ts.URL + "/export?session=" + sess.ID + "&run=" + k)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != status {
			t.Errorf("export run %s: got %d, want %d: %s", k, res.StatusCode, status, body)
		}
		if status == http.StatusOK {
			if tr, err := trace.Decode(body); err != nil || tr.Options.Temperature != 1.2 {
				t.Errorf("export run 2: %v, want the T=1.2 run", err)
			}
		}
	}
}

func TestCompareErrors(t *testing.T) {
	_, _, c := liveServer(t, Config{}, 0)
	for _, tc := range []struct{ variants, says string }{
		{"greedy", "at least two lines"},
		{"greedy\nwarm", `"warm" is not name=value`},
		{"greedy\nfoo=1", `unknown option "foo"`},
		{"greedy\nT=-1", "T=-1: invalid option: temperature"},
		{"T=1\nT=2\nT=3\nT=4\nT=5\nT=6\nT=7", "at most 6"},
	} {
		sendJSON(t, c, map[string]any{"type": "compare", "form": form{"variants": tc.variants}})
		waitFor(t, c, "an error saying "+tc.says, errorSaying(tc.says))
	}
}
