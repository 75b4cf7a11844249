package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"tracer/engine/refdata"
	"tracer/engine/tokenizer"
)

// The tokenizer playground (/tokenize, web/playground) on the server's
// real models: the text's tokens under one tokenizer or two side by side.

// playgroundModels is realModels plus gpt2: tiny-gpt2's weights with
// GPT-2's own tokenizer files (tiny-gpt2 has its vocabulary and no
// tokenizer). It returns the folder and GPT-2's and tok512's tokenizers.
func playgroundModels(t *testing.T) (string, tokenizer.Tokenizer, tokenizer.Tokenizer) {
	t.Helper()
	dir := realModels(t)
	weights := refdata.Need(t, "golden/tiny-gpt2")
	tokDir := refdata.Need(t, "tokenizers/gpt2")
	gpt2 := filepath.Join(dir, "gpt2")
	if err := os.Mkdir(gpt2, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ from, name string }{
		{weights, "config.json"}, {weights, "model.safetensors"}, {weights, "generation_config.json"},
		{tokDir, "tokenizer.json"}, {tokDir, "tokenizer_config.json"}, {tokDir, "vocab.json"}, {tokDir, "merges.txt"},
	} {
		if err := os.Symlink(filepath.Join(f.from, f.name), filepath.Join(gpt2, f.name)); err != nil {
			t.Fatal(err)
		}
	}
	g, err := tokenizer.Load(tokDir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tokenizer.Load(filepath.Join(refdata.Need(t, "models/stories260K"), "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, g, s
}

var playgroundIDs = regexp.MustCompile(`data-testid="pg-tok" data-id="(\d+)"`)

// TestPlaygroundServed: the server answers /tokenize (no browser): the
// llama2.c checkpoint's and the GGUF file's tokenizers give their Encode's
// tokens, the toy and tiny-gpt2 say they have no tokenizer, and the
// debugger's top bar links to the playground.
func TestPlaygroundServed(t *testing.T) {
	dir, _, tok512 := playgroundModels(t)
	url, _ := serve(t, Config{ModelsDir: dir}, nil)
	ggufTok, err := tokenizer.LoadGGUF(filepath.Join(refdata.Need(t, "models/stories260K"), "stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	const text = "Once upon a time,\n\tthere was a cat."
	for model, tok := range map[string]tokenizer.Tokenizer{"stories260K/stories260K.bin": tok512, "stories260K/stories260K-f32.gguf": ggufTok} {
		code, body := get("tokenize?partial=1&model=" + model + "&text=" + strings.NewReplacer(" ", "+", "\n", "%0A", "\t", "%09", ",", "%2C").Replace(text))
		want, _ := tok.Encode(text, true)
		var got []int
		for _, m := range playgroundIDs.FindAllStringSubmatch(body, -1) {
			id, _ := strconv.Atoi(m[1])
			got = append(got, id)
		}
		if code != http.StatusOK || !slices.Equal(got, want) {
			t.Errorf("%s: status %d, ids %v, want %v", model, code, got, want)
		}
	}
	for model, want := range map[string]string{"toy": "The toy has no tokenizer", "tiny-gpt2": "came without a tokenizer"} {
		if code, body := get("tokenize?model=" + model + "&text=I+love"); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: status %d, want the page to say %q", model, code, want)
		}
	}
	if _, body := get(""); !strings.Contains(body, `href="/tokenize" data-testid="playground-link"`) {
		t.Errorf("the debugger's top bar has no link to the playground")
	}
	if _, body := get("?lang=hi"); !strings.Contains(body, `href="/tokenize?lang=hi" data-testid="playground-link"`) || !strings.Contains(body, "टोकनाइज़र प्लेग्राउंड") {
		t.Errorf("the Hindi debugger's top bar has no Hindi link to the playground")
	}
}

// pgToken is a token of the playground's strip or list, as the browser
// shows it.
type pgToken struct {
	ID, Text, Background string
	Hex, How, Kind       string
	Merges               []string // each merge's result
}

// readColumns reads every column's tokens: the strip's, with their
// computed backgrounds, and the list's details.
const readColumns = `[...document.querySelectorAll("[data-testid=pg-column]")].map((c) => ({
	Model: c.dataset.model, Count: Number(c.dataset.count), CountText: c.querySelector("[data-testid=pg-count]").textContent,
	Left: c.getBoundingClientRect().left, Top: c.getBoundingClientRect().top,
	Strip: [...c.querySelectorAll("[data-testid=pg-tok]")].map((e) => ({ID: e.dataset.id, Text: e.textContent, Background: getComputedStyle(e).backgroundColor})),
	List: [...c.querySelectorAll("[data-testid=pg-item]")].map((e) => ({
		ID: e.dataset.id, Kind: e.dataset.kind, Text: e.querySelector("[data-testid=pg-item-token]").textContent,
		Hex: e.querySelector("[data-testid=pg-item-hex]").textContent, How: e.querySelector("[data-testid=pg-item-how]").textContent,
		Merges: [...e.querySelectorAll("[data-testid=pg-merge-result]")].map((m) => m.textContent)})),
}))`

type pgColumn struct {
	Model, CountText string
	Count            int
	Left, Top        float64
	Strip, List      []pgToken
}

// TestBrowserPlayground: type text with spaces, a newline and a tab; the
// tokens are the tokenizer's, in alternating colours, with their ids,
// bytes and merges; a second tokenizer beside it counts its own; at 360
// px nothing overflows; in Hindi the labels are Hindi.
func TestBrowserPlayground(t *testing.T) {
	skipShort(t)
	dir, gpt2, tok512 := playgroundModels(t)
	url, _ := serve(t, Config{ModelsDir: dir}, nil)
	ctx := browser(t)
	consoleErrors := collectConsole(ctx)
	do(t, ctx, "viewport", chromedp.EmulateViewport(1280, 800))

	// typeText replaces the text as a learner types it (the tab through
	// the editor, as the Tab key would move the focus) and waits for the
	// script's result.
	typeText := func(t *testing.T, parts ...string) string {
		t.Helper()
		do(t, ctx, "clear the text", chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector("[data-testid=pg-text]"); e.value = ""; e.focus(); document.body.dataset.pgState = "stale"; })()`))
		for _, p := range parts {
			if p == "\t" {
				do(t, ctx, "type a tab", chromedp.Evaluate[chromedp.Void](`document.execCommand("insertText", false, "\t")`))
				continue
			}
			do(t, ctx, "type "+p, chromedp.SendKeys(css("[data-testid=pg-text]"), p))
		}
		want := strings.Join(parts, "")
		waitJS(t, ctx, "the typed text", `document.querySelector("[data-testid=pg-text]").value === `+strconv.Quote(want))
		waitJS(t, ctx, "the result", `document.body.dataset.pgState === "done"`)
		return want
	}
	// pick sets a menu and waits for the result.
	pick := func(t *testing.T, name, value string) {
		t.Helper()
		do(t, ctx, "pick "+value, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector("[data-testid=%s]"); document.body.dataset.pgState = "stale"; s.value = %q; s.dispatchEvent(new Event("change")); })()`, name, value)))
		waitJS(t, ctx, "the result", `document.body.dataset.pgState === "done"`)
	}
	checkColumn := func(t *testing.T, c pgColumn, tok tokenizer.Tokenizer, text string) {
		t.Helper()
		want, err := tok.Encode(text, true)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, k := range c.Strip {
			id, _ := strconv.Atoi(k.ID)
			ids = append(ids, id)
		}
		if !slices.Equal(ids, want) || c.Count != len(want) || c.CountText != fmt.Sprintf("%d tokens", len(want)) {
			t.Fatalf("%s: ids %v (count %d, %q), want the tokenizer's %v", c.Model, ids, c.Count, c.CountText, want)
		}
		for i := 1; i < len(c.Strip); i++ {
			if c.Strip[i].Background == c.Strip[i-1].Background {
				t.Errorf("%s: tokens %d and %d (%q, %q) have one background %s: want neighbours in alternating colours", c.Model, i-1, i, c.Strip[i-1].Text, c.Strip[i].Text, c.Strip[i].Background)
			}
		}
		if len(c.List) != len(want) {
			t.Fatalf("%s: %d tokens listed, want %d", c.Model, len(c.List), len(want))
		}
		for i, k := range c.List {
			var hex []string
			for _, b := range tok.TokenBytes(want[i]) {
				hex = append(hex, fmt.Sprintf("%02x", b))
			}
			if k.ID != strconv.Itoa(want[i]) || k.Hex != strings.Join(hex, " ") {
				t.Errorf("%s: token %d: id %s, bytes %q, want %d, %q", c.Model, i, k.ID, k.Hex, want[i], strings.Join(hex, " "))
			}
		}
	}

	do(t, ctx, "open the playground", chromedp.Navigate(url+"tokenize?model=gpt2&text=Hello+world"), chromedp.WaitVisible(css("[data-testid=pg-text]")))
	cols := evalJS[[]pgColumn](t, ctx, readColumns)
	if len(cols) != 1 || cols[0].Model != "gpt2" {
		t.Fatalf("got %d columns, want gpt2's, rendered by the server", len(cols))
	}
	checkColumn(t, cols[0], gpt2, "Hello world")

	text := typeText(t, "Hello  world", "\n", "\t", "unbelievable tokens")
	cols = evalJS[[]pgColumn](t, ctx, readColumns)
	if len(cols) != 1 {
		t.Fatalf("got %d columns, want 1", len(cols))
	}
	checkColumn(t, cols[0], gpt2, text)
	var strip string
	for _, k := range cols[0].Strip {
		strip += k.Text
	}
	for _, mark := range []string{"␣", "⏎", "→"} {
		if !strings.Contains(strip, mark) {
			t.Errorf("the strip %q lacks %s: want spaces, the newline and the tab made visible", strip, mark)
		}
	}
	merged := false
	for _, k := range cols[0].List {
		if k.Kind != "merged" || len([]rune(k.Text)) < 2 {
			continue
		}
		merged = true
		if len(k.Merges) == 0 || k.Merges[len(k.Merges)-1] != k.Text || !strings.Contains(k.How, "merge") {
			t.Errorf("token %q: merges %q, how %q: want merges ending in the token", k.Text, k.Merges, k.How)
		}
	}
	if !merged {
		t.Errorf("no merged token of several characters in %q", text)
	}
	if got := evalJS[string](t, ctx, `location.search`); !strings.Contains(got, "model=gpt2") || !strings.Contains(got, "unbelievable") {
		t.Errorf("the address %q does not keep the text and model: want a reload to show the same", got)
	}

	t.Run("side by side", func(t *testing.T) {
		pick(t, "pg-model2", "stories260K/stories260K.bin")
		cols := evalJS[[]pgColumn](t, ctx, readColumns)
		if len(cols) != 2 || cols[0].Model != "gpt2" || cols[1].Model != "stories260K/stories260K.bin" {
			t.Fatalf("got columns %+v, want gpt2 and stories260K", cols)
		}
		checkColumn(t, cols[0], gpt2, text)
		checkColumn(t, cols[1], tok512, text)
		if cols[0].Count == cols[1].Count {
			t.Errorf("both tokenizers give %d tokens: want their own counts (GPT-2's 50257 tokens against tok512's 512)", cols[0].Count)
		}
		if cols[0].Top != cols[1].Top || cols[0].Left >= cols[1].Left {
			t.Errorf("columns at (%v, %v) and (%v, %v): want them side by side at 1280 px", cols[0].Left, cols[0].Top, cols[1].Left, cols[1].Top)
		}
		shootViewport(t, ctx, "screenshot-tokenizer.png")
	})

	t.Run("no tokenizer", func(t *testing.T) {
		pick(t, "pg-model2", "toy")
		if got := evalJS[string](t, ctx, `document.querySelectorAll("[data-testid=pg-column]")[1].querySelector("[data-testid=pg-note]").textContent`); !strings.Contains(got, "The toy has no tokenizer") {
			t.Errorf("the toy's column says %q, want that it has no tokenizer", got)
		}
		pick(t, "pg-model2", "stories260K/stories260K.bin")
	})

	t.Run("360px", func(t *testing.T) {
		do(t, ctx, "viewport", chromedp.EmulateViewport(360, 800))
		waitJS(t, ctx, "the layout", `window.innerWidth === 360`)
		typeText(t, "Hello  world", "\n", "\t", "unbelievable tokens ", "supercalifragilisticexpialidocious==================")
		if w := evalJS[[]float64](t, ctx, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
			wide := evalJS[[]string](t, ctx, `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5).slice(0, 6).map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`)
			t.Errorf("the page is %v px wide in a %v px window: want no horizontal overflow (too wide: %q)", w[0], w[1], wide)
		}
		cols := evalJS[[]pgColumn](t, ctx, readColumns)
		if len(cols) != 2 || cols[1].Top <= cols[0].Top {
			t.Errorf("want two columns, one above the other, at 360 px")
		}
		do(t, ctx, "viewport", chromedp.EmulateViewport(1280, 800))
	})

	t.Run("Hindi", func(t *testing.T) {
		do(t, ctx, "open in Hindi", chromedp.Navigate(url+"tokenize?lang=hi&model=gpt2"), chromedp.WaitVisible(css("[data-testid=pg-text]")))
		typed := typeText(t, "नमस्ते", "\n", "Hello world")
		labels := evalJS[[]string](t, ctx, `[document.documentElement.lang, document.querySelector("[data-testid=pg-model]").parentElement.textContent.trim(),
			document.querySelector("[data-testid=pg-submit]").textContent, [...document.querySelectorAll("[data-testid=pg-item-how]")].map((e) => e.textContent).join(" | "), document.title]`)
		for i, want := range []string{"hi", "किस मॉडल का tokenizer", "tokens में बाँटें", "बना", "टोकनाइज़र प्लेग्राउंड"} {
			if !strings.Contains(labels[i], want) {
				t.Errorf("label %d: got %q, want it to say %q", i, labels[i], want)
			}
		}
		do(t, ctx, "switch to English", chromedp.Click(css("[data-testid=lang-en]")))
		waitJS(t, ctx, "the page in English with the text kept", `document.documentElement.lang === "en" && document.querySelector("[data-testid=pg-text]").value === `+strconv.Quote(typed))
		if got := evalJS[string](t, ctx, `document.querySelector("[data-testid=pg-submit]").textContent`); got != "Tokenize" {
			t.Errorf("the English page's button says %q", got)
		}
	})

	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// shootViewport saves what the window shows (1280×800 here, not the whole
// page as shoot does) to docs/ when TRACER_SCREENSHOTS=1.
func shootViewport(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("TRACER_SCREENSHOTS") != "1" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("../docs", name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}
