package web

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"tracer/trace"
	"tracer/web/marks"
)

// The beam tree (issue 37, point 4) in a real browser, on a stories260K
// beam search: a tree with an edge from every beam to the beam it extends,
// counted against the trace; columns numbered like the page's header;
// tokens whole with their whitespace marked; the winner's path, the pruned
// and the finished marked; the current step in view on a phone; and the
// attention panel naming a beam's own tokens.

// beamTreeJS reads the beam tree the page shows.
const beamTreeJS = `(() => {
	const tree = document.querySelector("[data-testid=beam-tree]");
	const scroll = tree.querySelector("[data-testid=beam-scroll]").getBoundingClientRect();
	const box = (e) => e.getBoundingClientRect();
	const win = document.querySelector("[data-testid=hypothesis-active]");
	return {
		Header: document.querySelector("[data-testid=step-index]").textContent,
		Columns: [...tree.querySelectorAll("[data-testid=beam-step]")].map(c => ({
			Step: Number(c.dataset.step), Label: c.querySelector(".beam-col-head").textContent,
			Current: c.classList.contains("current"),
			InView: box(c).left >= scroll.left - 1 && box(c).right <= scroll.right + 1,
		})),
		Edges: [...tree.querySelectorAll("[data-testid=beam-edge]")].map(e => ({From: e.dataset.from, To: e.dataset.to, Step: Number(e.dataset.step)})),
		Nodes: [...tree.querySelectorAll("[data-node]")].map(n => ({
			ID: n.dataset.node, TestID: n.dataset.testid, Label: n.querySelector(".tok").textContent, Title: n.title,
			Clipped: n.querySelector(".tok").scrollWidth > n.querySelector(".tok").clientWidth + 1,
			Finished: n.hasAttribute("data-finished"), EndShown: !!n.querySelector(".end") && box(n.querySelector(".end")).width > 0,
			Opacity: Number(getComputedStyle(n).opacity),
			Left: Math.round(box(n).left - box(n.parentElement).left), Width: Math.round(box(n).width), Height: Math.round(box(n).height),
		})),
		Hypotheses: tree.querySelectorAll("[data-testid=beam-finished] tbody tr").length,
		WinnerText: win ? win.querySelector(".tok").textContent : "",
		WinnerLength: win ? Number(win.children[2].textContent) : -1,
	};
})()`

type beamColumnSeen struct {
	Step    int
	Label   string
	Current bool
	InView  bool
}

type beamNodeSeen struct {
	ID, TestID, Label, Title string
	Finished, EndShown       bool
	Clipped                  bool // cut short by the box, not by the server
	Opacity                  float64
	Left, Width, Height      int
}

type beamTreeSeen struct {
	Header  string
	Columns []beamColumnSeen
	Edges   []struct {
		From, To string
		Step     int
	}
	Nodes        []beamNodeSeen
	Hypotheses   int
	WinnerText   string
	WinnerLength int
}

// column is the step a node's ID names: "beam-3-p1" is in step 3's column.
func (n beamNodeSeen) column() int {
	s, _, _ := strings.Cut(strings.TrimPrefix(n.ID, "beam-"), "-")
	k, _ := strconv.Atoi(s)
	return k
}

func TestBrowserBeamTree(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "12", "num_beams": "3", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	tr := exportedTrace(t, ctx)
	_, n := index(t, ctx)
	if n != len(tr.Steps) || n < 2 {
		t.Fatalf("the page counts %d steps, the trace holds %d", n, len(tr.Steps))
	}
	goTo(t, ctx, n-1)
	got := evalJS[beamTreeSeen](t, ctx, beamTreeJS)
	nodes := map[string]beamNodeSeen{}
	for _, nd := range got.Nodes {
		nodes[nd.ID] = nd
	}

	t.Run("an edge per surviving beam", func(t *testing.T) {
		perStep := map[int]int{}
		for _, e := range got.Edges {
			perStep[e.Step]++
			if _, ok := nodes[e.From]; !ok {
				t.Errorf("edge %s → %s starts at no node", e.From, e.To)
			}
			if _, ok := nodes[e.To]; !ok {
				t.Errorf("edge %s → %s ends at no node", e.From, e.To)
			}
		}
		for i, s := range tr.Steps {
			if s.Beams == nil {
				t.Fatalf("step %d records no beams", i+1)
			}
			if perStep[i+1] != len(s.Beams.Source) {
				t.Errorf("step %d: the page draws %d edges to beams that went on, the trace says %d survived", i+1, perStep[i+1], len(s.Beams.Source))
			}
			for j, src := range s.Beams.Source {
				want := fmt.Sprintf("beam-%d-%d → beam-%d-%d", i, src, i+1, j)
				found := false
				for _, e := range got.Edges {
					found = found || e.From+" → "+e.To == want
				}
				if !found {
					t.Errorf("step %d: no edge %s (beam %d extends beam %d)", i+1, want, j, src)
				}
			}
		}
	})

	t.Run("the counter", func(t *testing.T) {
		for _, pos := range []int{n - 1, n / 2} {
			seen := got
			if pos != n-1 {
				goTo(t, ctx, pos)
				seen = evalJS[beamTreeSeen](t, ctx, beamTreeJS)
			}
			m := regexp.MustCompile(`^Step (\d+) of (\d+)$`).FindStringSubmatch(strings.TrimSpace(seen.Header))
			if m == nil || m[1] != strconv.Itoa(pos+1) || m[2] != strconv.Itoa(n) {
				t.Fatalf("the header reads %q, want Step %d of %d", seen.Header, pos+1, n)
			}
			if len(seen.Columns) != pos+1 {
				t.Errorf("step %d: got %d columns, want one per step so far", pos+1, len(seen.Columns))
			}
			for _, c := range seen.Columns {
				if want := fmt.Sprintf("Step %d of %s", c.Step, m[2]); c.Label != want {
					t.Errorf("step %d: the column of step %d reads %q, want %q like the header", pos+1, c.Step, c.Label, want)
				}
				if c.Current != (c.Step == pos+1) {
					t.Errorf("step %d: the column of step %d has current %v", pos+1, c.Step, c.Current)
				}
			}
		}
	})

	t.Run("tokens whole, whitespace marked", func(t *testing.T) {
		for _, nd := range got.Nodes {
			if utf8.RuneCountInString(nd.Title) <= 16 && (nd.Label != nd.Title || strings.HasSuffix(nd.Label, "…")) {
				t.Errorf("node %s: shows %q for the token %q", nd.ID, nd.Label, nd.Title)
			}
			if nd.Clipped {
				t.Errorf("node %s: its box cuts %q short", nd.ID, nd.Label)
			}
			if strings.ContainsAny(nd.Label, " \n\t") {
				t.Errorf("node %s: shows raw whitespace in %q", nd.ID, nd.Label)
			}
		}
		for i, s := range tr.Steps {
			for j := range s.Beams.Source {
				id := fmt.Sprintf("beam-%d-%d", i+1, j)
				if want := marks.Token(s.Rows[j].Chosen.Token); nodes[id].Title != want {
					t.Errorf("node %s: holds %q, want the beam's token %q", id, nodes[id].Title, want)
				}
			}
		}
	})

	t.Run("winner, pruned, finished", func(t *testing.T) {
		var path strings.Builder
		winners, pruned, finished := 0, 0, 0
		for _, nd := range got.Nodes {
			switch nd.TestID {
			case "beam-node-winner":
				winners++
				path.WriteString(nd.Title)
			case "beam-node-pruned":
				pruned++
				if nd.Opacity >= 1 {
					t.Errorf("pruned node %s is not faded (opacity %v)", nd.ID, nd.Opacity)
				}
			}
			if nd.Finished {
				finished++
				if !nd.EndShown {
					t.Errorf("finished node %s shows no end mark", nd.ID)
				}
			}
		}
		if winners == 0 || winners != got.WinnerLength || path.String() != got.WinnerText {
			t.Errorf("winner's path: %d nodes reading %q, want %d reading the winner %q", winners, path.String(), got.WinnerLength, got.WinnerText)
		}
		if pruned == 0 {
			t.Error("no pruned node shown")
		}
		if finished == 0 || finished != got.Hypotheses {
			t.Errorf("%d nodes marked finished, want one per hypothesis (%d)", finished, got.Hypotheses)
		}
	})

	t.Run("attention names a beam's tokens", func(t *testing.T) {
		const pos, beam = 5, 1
		goTo(t, ctx, pos)
		doRendered(t, ctx, "beam 1", chromedp.Click(css(fmt.Sprintf("[data-testid=row-tabs] [data-row=%q]", strconv.Itoa(beam)))))
		waitJS(t, ctx, "the attention panel", `document.querySelectorAll("[data-testid=attention-panel] .attn-key").length > 0`)
		keys := evalJS[[]string](t, ctx, `[...document.querySelectorAll("[data-testid=attention-panel] .attn-key")].map(e => e.textContent)`)
		var want []string
		for _, tok := range tr.Prompt.Tokens {
			want = append(want, marks.Token(tok))
		}
		var path []string
		for i, j := pos-1, beam; i >= 0; i-- {
			path = append([]string{marks.Token(tr.Steps[i].Rows[j].Chosen.Token)}, path...)
			j = tr.Steps[i].Beams.Source[j]
		}
		want = append(want, path...)
		if strings.Join(keys, "|") != strings.Join(want, "|") {
			t.Errorf("beam %d at step %d: the attention keys read %q, want its prompt and path %q", beam, pos+1, keys, want)
		}
	})

	t.Run("phone: the tree scrolls, the page does not", func(t *testing.T) {
		do(t, ctx, "viewport", chromedp.EmulateViewport(390, 844))
		t.Cleanup(func() { do(t, ctx, "viewport", chromedp.EmulateViewport(1280, 720)) })
		for _, pos := range []int{n / 2, n - 1} {
			goTo(t, ctx, pos)
			s := evalJS[map[string]float64](t, ctx, `(() => { const s = document.querySelector("[data-testid=beam-scroll]");
				return {page: document.documentElement.scrollWidth, inner: innerWidth, tree: s.scrollWidth, box: s.clientWidth}; })()`)
			if s["page"] > s["inner"] {
				t.Errorf("step %d: the page is %v px wide in a %v px window", pos+1, s["page"], s["inner"])
			}
			if s["tree"] <= s["box"] && pos == n-1 {
				t.Errorf("step %d: the tree (%v px) does not scroll in its %v px panel", pos+1, s["tree"], s["box"])
			}
			cur := 0
			for _, c := range evalJS[beamTreeSeen](t, ctx, beamTreeJS).Columns {
				if c.Current {
					cur++
					if !c.InView {
						t.Errorf("step %d: its column is scrolled out of view", pos+1)
					}
				}
			}
			if cur != 1 {
				t.Errorf("step %d: %d current columns, want 1", pos+1, cur)
			}
		}
		shoot(t, ctx, "screenshot-beams-phone.png")
	})

	t.Run("imported: whitespace-only and long tokens", func(t *testing.T) {
		importSpacedBeams(t, ctx, tr)
		_, n := index(t, ctx)
		goTo(t, ctx, n-1)
		got := evalJS[beamTreeSeen](t, ctx, beamTreeJS)
		left := map[int]int{}
		spaces, long := 0, 0
		for _, nd := range got.Nodes {
			if nd.Width != got.Nodes[0].Width || nd.Height != got.Nodes[0].Height {
				t.Errorf("node %s (%q) is %d×%d, the others %d×%d", nd.ID, nd.Label, nd.Width, nd.Height, got.Nodes[0].Width, got.Nodes[0].Height)
			}
			if l, ok := left[nd.column()]; ok && l != nd.Left {
				t.Errorf("node %s (%q) stands %d px off its column", nd.ID, nd.Label, nd.Left-l)
			}
			left[nd.column()] = nd.Left
			if nd.Clipped {
				t.Errorf("node %s: its box cuts %q short", nd.ID, nd.Label)
			}
			switch {
			case nd.Title == "␣" || nd.Title == "⏎⏎":
				spaces++
				if nd.Label != nd.Title {
					t.Errorf("node %s: shows %q for %q", nd.ID, nd.Label, nd.Title)
				}
			case utf8.RuneCountInString(nd.Title) > 16:
				long++
				if want := string([]rune(nd.Title)[:15]) + "…"; nd.Label != want {
					t.Errorf("node %s: shows %q for the long token %q, want %q", nd.ID, nd.Label, nd.Title, want)
				}
			case nd.Label != nd.Title:
				t.Errorf("node %s: shows %q for %q", nd.ID, nd.Label, nd.Title)
			}
		}
		if spaces == 0 || long == 0 {
			t.Errorf("got %d whitespace-only and %d long tokens in the tree, want some of each", spaces, long)
		}
		shoot(t, ctx, "screenshot-beams-spaced.png")
	})
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("console errors: %v", msgs)
	}
}

// spacedBeamToken names id with a whitespace-only token, a long one or a
// short one.
func spacedBeamToken(id int) string {
	switch id % 4 {
	case 0:
		return " "
	case 1:
		return "\n\n"
	case 2:
		return fmt.Sprintf("a_very_long_token_%d", id)
	}
	return fmt.Sprintf("w%d", id)
}

// importSpacedBeams imports tr with every token renamed by spacedBeamToken.
func importSpacedBeams(t *testing.T, ctx context.Context, tr *trace.Trace) {
	t.Helper()
	cp := *tr
	cp.Prompt.Tokens = nil
	for _, id := range tr.Prompt.IDs {
		cp.Prompt.Tokens = append(cp.Prompt.Tokens, spacedBeamToken(id))
	}
	cp.Steps = make([]trace.Step, len(tr.Steps))
	for i, s := range tr.Steps {
		s.Rows = append([]trace.StepRow(nil), s.Rows...)
		for r := range s.Rows {
			row := &s.Rows[r]
			row.Candidates = append([]trace.Candidate(nil), row.Candidates...)
			for k := range row.Candidates {
				row.Candidates[k].Token = spacedBeamToken(row.Candidates[k].ID)
			}
			row.Chosen.Token = spacedBeamToken(row.Chosen.ID)
		}
		cp.Steps[i] = s
	}
	b, err := json.Marshal(&cp)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "beams.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "import", chromedp.SetUploadFiles(css("[data-testid=trace-import]"), []string{path}))
	waitJS(t, ctx, "the imported trace", `document.querySelector(".source").textContent.includes("imported beams.json")`)
}
