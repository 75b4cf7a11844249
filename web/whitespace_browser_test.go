package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/engine/refdata"
)

// One whitespace rendering (issue 37, point 5): every panel writes a
// token's spaces, newlines and tabs with the same marks (web/marks): ␣ ⏎ →.

// spacedVocab gives every id of a vocabulary a token holding whitespace
// the page must show: a leading space, a newline, a tab, SentencePiece's
// ▁, a trailing space, or none.
func spacedVocab(id int) string {
	switch id % 6 {
	case 0:
		return fmt.Sprintf(" a%d", id)
	case 1:
		return "\n"
	case 2:
		return fmt.Sprintf("\tt%d", id)
	case 3:
		return fmt.Sprintf("▁b%d", id)
	case 4:
		return fmt.Sprintf("c%d ", id)
	}
	return fmt.Sprintf("x%d", id)
}

// spacedTrace is testdata/export/sampled.json (a sampled run with
// attention and the logit lens recorded, by a model without a tokenizer)
// with every token named by spacedVocab.
func spacedTrace(t *testing.T) string {
	raw, err := os.ReadFile(refdata.Need(t, "export/sampled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["id"].(float64); ok {
				if _, ok := v["token"]; ok {
					v["token"] = spacedVocab(int(id))
				}
			}
			if p, ok := v["prompt"].(map[string]any); ok {
				ids := p["ids"].([]any)
				toks := make([]any, len(ids))
				for i, id := range ids {
					toks[i] = spacedVocab(int(id.(float64)))
				}
				p["tokens"] = toks
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spaced.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rawWhitespace finds, in the panels matched by sel, the leaf elements
// that show a token's whitespace other than by the page's marks: a text
// of whitespace only, a tab, ▁ or another page's marks (↵ ⇥ ␍), or one of
// spacedVocab's tokens with its space left raw. It returns them with the
// marks the panels hold.
const rawWhitespace = `((sel) => {
	const bad = [], marks = new Set();
	for (const panel of document.querySelectorAll(sel)) {
		for (const el of panel.querySelectorAll("*")) {
			if (el.children.length > 0 || el.closest("textarea, input, select, script, style, svg, [data-testid=output-text]")) continue;
			const s = el.textContent;
			for (const m of ["␣", "⏎", "→"]) if (s.includes(m)) marks.add(m);
			if (s.length > 0 && s.trim() === "" || /[\t▁↵⇥␍]/.test(s) || /(^|[ \n])a\d+/.test(s) || /c\d+ $/.test(s)) {
				bad.push((panel.dataset.testid || panel.className) + ": " + JSON.stringify(s));
			}
		}
	}
	return {bad, marks: [...marks].sort().join("")};
})`

func TestBrowserOneWhitespaceRendering(t *testing.T) {
	skipShort(t)
	url, _ := serve(t, Config{ModelsDir: realModels(t)}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	open(t, ctx, url)
	path := spacedTrace(t)
	do(t, ctx, "import", chromedp.SetUploadFiles(css("[data-testid=trace-import]"), []string{path}))
	waitJS(t, ctx, "the imported trace", `document.querySelector(".source").textContent.includes("imported spaced.json")`)

	type found struct {
		Bad   []string
		Marks string
	}
	panels := []string{"step-panel", "funnel", "draw", "chosen-panel", "attention-panel", "lens-panel", "text-panel"}
	seen := map[string]string{}
	for _, step := range []int{0, 1, 4, 7} {
		goTo(t, ctx, step)
		waitJS(t, ctx, "the inside panels", `document.querySelector("[data-testid=attention-panel]") && document.querySelector("[data-testid=lens-panel]")`)
		for _, p := range panels {
			f := evalJS[found](t, ctx, fmt.Sprintf(`%s("[data-testid=%s]")`, rawWhitespace, p))
			for _, b := range f.Bad {
				t.Errorf("step %d: %s", step, b)
			}
			seen[p] += f.Marks
		}
	}
	for _, p := range panels {
		for _, m := range []string{"␣", "⏎", "→"} {
			if p == "draw" || p == "chosen-panel" || p == "text-panel" {
				continue // a few tokens each: some marks by chance only
			}
			if !strings.Contains(seen[p], m) {
				t.Errorf("%s shows no %s over four steps of tokens that hold spaces, newlines and tabs", p, m)
			}
		}
	}

	// The one-file export renders the same panels on the server.
	sess := evalJS[string](t, ctx, `document.querySelector("[data-session]").dataset.session`)
	resp, err := http.Get(strings.TrimSuffix(url, "/") + "/export?format=html&session=" + sess)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %s %s", resp.Status, body)
	}
	// What the export shows, without the trace it carries for import.
	res := regexp.MustCompile(`(?s)<script.*?</script>`).ReplaceAllString(string(body), "")
	for _, bad := range []string{"↵", "⇥", "␍", "▁b"} {
		if strings.Contains(res, bad) {
			t.Errorf("the export holds %q, a mark the page does not use", bad)
		}
	}
	for _, m := range []string{"␣a", "⏎", "→t"} {
		if !strings.Contains(res, m) {
			t.Errorf("the export lacks %q", m)
		}
	}

	// A live comparison on stories260K: its pieces begin with a space, and
	// its BOS piece is "\n<s>\n", in the banner, the table and the
	// prompt's tokens alike.
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "6", "variants": "greedy\nT=0.7"})
	runAndWait(t, ctx, "run-compare", "done")
	f := evalJS[found](t, ctx, rawWhitespace+`("[data-testid=compare]")`)
	for _, b := range f.Bad {
		t.Errorf("compare: %s", b)
	}
	if !strings.Contains(f.Marks, "␣") {
		t.Errorf("the comparison shows no ␣ (marks %q): its tokens begin with spaces", f.Marks)
	}
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "4", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	f = evalJS[found](t, ctx, rawWhitespace+`("[data-testid=tokenizer], [data-testid=step-panel]")`)
	for _, b := range f.Bad {
		t.Errorf("stories260K: %s", b)
	}
	if !strings.Contains(f.Marks, "⏎") || !strings.Contains(f.Marks, "␣") {
		t.Errorf("the prompt's tokens show marks %q, want ⏎ (the BOS piece) and ␣", f.Marks)
	}
	if msgs := consoleErrors(); len(msgs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
