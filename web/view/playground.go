package view

import (
	"strconv"

	"tracer/web/words"
)

// The tokenizer playground (/tokenize, web/playground): a text under one
// or two tokenizers, token by token.

// PlaygroundView is the whole playground page.
type PlaygroundView struct {
	W                words.Words
	CSS, PageCSS, JS string // asset URLs: the page's style.css, playground.css, playground.js
	Icon             string
	Langs            []LangLinkView
	Models, Models2  []PlaygroundModelView // the menus of the first and the second tokenizer
	Text             string
	Limit            string // "at most 8 KiB"
	MaxBytes         int    // the longest text, in bytes
	Result           PlaygroundResultView
}

// PlaygroundModelView is one model of a menu.
type PlaygroundModelView struct {
	Value, Label string
	Selected     bool
}

// PlaygroundResultView is what the text gives: the fragment the script
// fetches (?partial=1) as the learner types.
type PlaygroundResultView struct {
	W       words.Words
	Error   string // the request's error (the text too long, a model not on the list); no columns then
	Hint    string // no text yet: what to do
	Size    string // "12 characters, 14 bytes"
	Legend  string
	Columns []PlaygroundColumnView
}

// PlaygroundColumnView is the text under one tokenizer.
type PlaygroundColumnView struct {
	Model, Label string
	Note         string // why there are no tokens: no tokenizer, a serving engine's model, a failure
	Count        string // "5 tokens"
	N            int
	Tokens       []PlaygroundTokenView // every token, for the strip
	Listed       []PlaygroundTokenView // the first ones, in detail
	More         string                // "The first 500 tokens are listed." when not all are
}

// PlaygroundTokenView is one token of the text.
type PlaygroundTokenView struct {
	Index   int
	Text    string // as the page writes it: ␣ for a space, ⏎ a newline, → a tab
	Vocab   string // the vocabulary's spelling (Ġ, ▁), when it differs from Text
	ID      int
	Hex     string // its bytes, "48 65"
	Special bool
	Kind    string // how it was built: "merged", "single", "byte fallback", ...
	How     string // the same, in words
	Units   []string
	Merges  []PlaygroundMergeView
}

// PlaygroundMergeView is one merge that built a token.
type PlaygroundMergeView struct {
	Left, Right, Result string
	Order               string // "rank 12" or "score -3.50"
}

// TokenizeURL is the playground in lang.
func TokenizeURL(lang string) string {
	return "/tokenize" + LangQuery(lang)
}

// pgParity alternates the tokens' colours.
func pgParity(i int) string {
	if i%2 == 0 {
		return "even"
	}
	return "odd"
}

func pgItoa(i int) string { return strconv.Itoa(i) }

// pgColumns is the class of the columns' grid: side by side for two.
func pgColumns(r PlaygroundResultView) string {
	if len(r.Columns) > 1 {
		return "pg-columns two"
	}
	return "pg-columns"
}
