// Package playground is the tokenizer playground, GET /tokenize: a text
// under the tokenizer of any model the run form offers (and a second one
// beside it), token by token, with each token's id, its bytes and the
// merges that built it (tokenizer.Explain). The page is rendered on the
// server from a GET form, so it works without the script; the script
// (static/playground.js) fetches the same address with &partial=1 for the
// result alone as the learner types.
//
// Texts are encoded exactly as a run's text prompt is (Encode with the
// special tokens, as models.Loaded.Request does), by the tokenizer the
// catalog opens for the runs. The handler bounds what one request costs:
// the text's length (Config.MaxText), the address's, and how many
// tokenizations run at once.
//
// It imports engine/tokenizer, web/catalog (the models), web/view (the
// page), web/words (its wording) and web/marks (how a token is written),
// and nothing else of web: never web/live or web/runs.
package playground

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"tracer/engine/tokenizer"
	"tracer/web/catalog"
	"tracer/web/marks"
	"tracer/web/view"
	"tracer/web/words"
)

// Bounds of one request.
const (
	DefaultMaxText = 8 << 10 // the longest text, in bytes
	// maxQueryFactor bounds the address's query: a text of MaxText bytes,
	// every byte percent-encoded, and room for the other parameters.
	maxQueryFactor = 3
	maxQueryExtra  = 4 << 10
	// MaxListed is how many tokens of a column are listed in detail; the
	// strip shows them all.
	MaxListed = 500
	maxQueue  = 16 // tokenizations that may wait for a slot; more are refused
)

// Errors of Models.Tokenizer, which the page words.
var (
	ErrToy         = errors.New("the toy has no tokenizer")
	ErrNoTokenizer = errors.New("the model has no tokenizer")
	ErrServer      = errors.New("the model runs on a serving engine")
)

// Models is what the playground needs of the catalog: the run form's menu
// and the tokenizer of one of its entries (see FromCatalog).
type Models interface {
	Menu() []catalog.Entry
	// Tokenizer returns the tokenizer runs on the model named name use;
	// ErrToy, ErrNoTokenizer or ErrServer when there is none here.
	Tokenizer(name string) (tokenizer.Tokenizer, error)
}

// Config configures the playground.
type Config struct {
	Models  Models
	Book    *words.Book
	Langs   []string                 // the languages the page speaks; the first is the default
	Asset   func(name string) string // the URL of a static asset ("style.css")
	Log     *slog.Logger             // nil: no logging
	MaxText int                      // the longest text in bytes; 0 means DefaultMaxText
	Slots   int                      // tokenizations at once; 0 means the number of CPUs
}

// Handler serves /tokenize.
type Handler struct {
	cfg     Config
	slots   chan struct{}
	waiting atomic.Int32
}

// New returns the playground's handler.
func New(cfg Config) *Handler {
	cfg.MaxText = cmp.Or(max(cfg.MaxText, 0), DefaultMaxText)
	cfg.Slots = cmp.Or(max(cfg.Slots, 0), runtime.NumCPU())
	if len(cfg.Langs) == 0 {
		cfg.Langs = []string{"en"}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Asset == nil {
		cfg.Asset = func(name string) string { return "/static/" + name }
	}
	return &Handler{cfg: cfg, slots: make(chan struct{}, cfg.Slots)}
}

// request is what a request asks for, read from its query.
type request struct {
	lang          string
	model, model2 string
	text          string
	sample        bool // no text parameter: the page opens on a sample text
	partial       bool // the result fragment alone
}

// parse reads the query: the language, the two models (model2 "" for
// none), the text (CRLF read as LF, as a textarea holds it) and partial.
func (h *Handler) parse(r *http.Request) request {
	q := r.URL.Query()
	req := request{lang: h.cfg.Langs[0], model: q.Get("model"), model2: q.Get("model2"), partial: q.Get("partial") == "1"}
	if l := q.Get("lang"); slices.Contains(h.cfg.Langs, l) {
		req.lang = l
	}
	text, ok := q["text"]
	req.sample = !ok
	if ok {
		req.text = strings.ReplaceAll(text[0], "\r\n", "\n")
	}
	return req
}

// ServeHTTP answers GET /tokenize?model=M&model2=N&text=T&lang=L, and
// with &partial=1 the result fragment alone.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := h.parse(r)
	if len(r.URL.RawQuery) > maxQueryFactor*h.cfg.MaxText+maxQueryExtra {
		req.text, req.sample = "", false // not shown again: the page opens empty, with the error
		wd := h.cfg.Book.In(req.lang)
		h.write(w, r, http.StatusRequestURITooLong, req, view.PlaygroundResultView{W: wd,
			Error: wd.F(words.KeyPgQueryTooLong, "max", sizeText(h.cfg.MaxText))})
		return
	}
	status, result := h.result(r.Context(), &req)
	h.write(w, r, status, req, result)
}

// result tokenizes the text under the request's models; the status is
// 200, or why the text was not tokenized.
func (h *Handler) result(ctx context.Context, req *request) (int, view.PlaygroundResultView) {
	wd := h.cfg.Book.In(req.lang)
	res := view.PlaygroundResultView{W: wd, Legend: wd.T(words.KeyPgLegend)}
	menu := h.cfg.Models.Menu()
	if req.model == "" {
		req.model = defaultModel(menu)
	}
	if req.sample {
		req.text = wd.T(words.KeyPgSample)
	}
	names := []string{req.model}
	if req.model2 != "" {
		names = append(names, req.model2)
	}
	for _, n := range names {
		if !slices.ContainsFunc(menu, func(e catalog.Entry) bool { return e.Name == n }) {
			res.Error = wd.F(words.KeyPgUnknownModel, "model", strconv.Quote(clip(n, 80)))
			return http.StatusBadRequest, res
		}
	}
	if len(req.text) > h.cfg.MaxText {
		res.Error = wd.F(words.KeyPgTooLong, "size", sizeText(len(req.text)), "max", sizeText(h.cfg.MaxText))
		return http.StatusRequestEntityTooLarge, res
	}
	if req.text == "" {
		res.Hint = wd.T(words.KeyPgHint)
		return http.StatusOK, res
	}
	release, ok := h.slot(ctx)
	if !ok {
		res.Error = wd.T(words.KeyPgBusy)
		return http.StatusServiceUnavailable, res
	}
	defer release()
	res.Size = wd.F(words.KeyPgSize, "chars", strconv.Itoa(utf8.RuneCountInString(req.text)), "bytes", strconv.Itoa(len(req.text)))
	for _, n := range names {
		i := slices.IndexFunc(menu, func(e catalog.Entry) bool { return e.Name == n })
		res.Columns = append(res.Columns, h.column(menu[i], req.text, wd))
	}
	return http.StatusOK, res
}

// defaultModel is the model the page opens on: the first local model
// after the toy, else the toy.
func defaultModel(menu []catalog.Entry) string {
	for _, e := range menu {
		if e.Name != "toy" && e.Server == nil && e.Unavailable == "" && !strings.HasPrefix(e.Name, catalog.ServerPrefix) {
			return e.Name
		}
	}
	return "toy"
}

// slot waits for one of the tokenization slots: at most Slots run at
// once and maxQueue more wait; ok is false when the line is full or the
// reader left.
func (h *Handler) slot(ctx context.Context) (release func(), ok bool) {
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots }, true
	default:
	}
	if h.waiting.Add(1) > maxQueue {
		h.waiting.Add(-1)
		return nil, false
	}
	defer h.waiting.Add(-1)
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots }, true
	case <-ctx.Done():
		return nil, false
	}
}

// column is text under the tokenizer of the model e.
func (h *Handler) column(e catalog.Entry, text string, wd words.Words) view.PlaygroundColumnView {
	c := view.PlaygroundColumnView{Model: e.Name, Label: e.Label}
	tok, err := h.cfg.Models.Tokenizer(e.Name)
	switch {
	case errors.Is(err, ErrToy):
		c.Note = wd.T(words.KeyPgToy)
	case errors.Is(err, ErrNoTokenizer):
		c.Note = wd.T(words.KeyPgNoTokenizer)
	case errors.Is(err, ErrServer):
		c.Note = wd.T(words.KeyPgServer)
	case err != nil:
		h.cfg.Log.Warn("tokenizer playground: open", "model", e.Name, "err", err)
		c.Note = wd.F(words.KeyPgOpenFailed, "err", err.Error())
	}
	if c.Note != "" {
		return c
	}
	toks, err := Tokenize(tok, text)
	if err != nil {
		c.Note = wd.F(words.KeyPgEncodeFailed, "err", err.Error())
		return c
	}
	c.N = len(toks)
	c.Count = wd.F(words.KeyPgCount, "n", strconv.Itoa(c.N))
	if c.N == 1 {
		c.Count = wd.T(words.KeyPgCountOne)
	}
	for i, t := range toks {
		v := view.PlaygroundTokenView{Index: i, Text: t.Text, ID: t.ID, Special: t.Special}
		c.Tokens = append(c.Tokens, v)
		if i >= MaxListed {
			continue
		}
		v.Vocab, v.Hex, v.Kind, v.How = t.Vocab, t.Hex, t.Build.Kind.String(), how(t.Build, wd)
		for _, u := range t.Build.Units {
			v.Units = append(v.Units, pieceText(tok, u))
		}
		for _, m := range t.Build.Merges {
			mv := view.PlaygroundMergeView{Left: pieceText(tok, m.Left), Right: pieceText(tok, m.Right), Result: pieceText(tok, m.Result),
				Order: wd.F(words.KeyPgRank, "n", strconv.Itoa(m.Rank))}
			if m.Rank < 0 {
				mv.Order = wd.F(words.KeyPgScore, "score", strconv.FormatFloat(float64(m.Score), 'g', 5, 32))
			}
			v.Merges = append(v.Merges, mv)
		}
		c.Listed = append(c.Listed, v)
	}
	if c.N > MaxListed {
		c.More = wd.F(words.KeyPgMore, "n", strconv.Itoa(MaxListed))
	}
	return c
}

// how words a token's building.
func how(b tokenizer.Building, wd words.Words) string {
	switch b.Kind {
	case tokenizer.BuildMerged:
		if len(b.Merges) == 1 {
			return wd.T(words.KeyPgHowMergedOne)
		}
		return wd.F(words.KeyPgHowMerged, "n", strconv.Itoa(len(b.Merges)))
	case tokenizer.BuildSingle:
		return wd.T(words.KeyPgHowSingle)
	case tokenizer.BuildByteFallback:
		return wd.T(words.KeyPgHowByte)
	case tokenizer.BuildAdded:
		return wd.T(words.KeyPgHowAdded)
	case tokenizer.BuildWhole:
		return wd.T(words.KeyPgHowWhole)
	case tokenizer.BuildUnk:
		return wd.T(words.KeyPgHowUnk)
	}
	return wd.T(words.KeyPgHowUnknown)
}

// write answers with the page, or with the result alone for partial.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, status int, req request, res view.PlaygroundResultView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	var err error
	if req.partial {
		err = view.PlaygroundResult(res).Render(r.Context(), w)
	} else {
		err = view.Playground(h.page(req, res)).Render(r.Context(), w)
	}
	if err != nil && r.Context().Err() == nil {
		h.cfg.Log.Warn("tokenizer playground: render", "err", err)
	}
}

// page is the whole page around res.
func (h *Handler) page(req request, res view.PlaygroundResultView) view.PlaygroundView {
	wd := res.W
	v := view.PlaygroundView{
		W: wd, CSS: h.cfg.Asset("style.css"), PageCSS: h.cfg.Asset("playground.css"), JS: h.cfg.Asset("playground.js"),
		Icon: h.cfg.Asset("favicon.svg"), Text: req.text, MaxBytes: h.cfg.MaxText,
		Limit: wd.F(words.KeyPgLimit, "size", sizeText(h.cfg.MaxText)), Result: res,
	}
	for _, l := range h.cfg.Langs {
		v.Langs = append(v.Langs, view.LangLinkView{Code: l, Name: wd.In(l).T("lang-" + l), URL: langURL(req, l), Current: l == req.lang})
	}
	v.Models2 = append(v.Models2, view.PlaygroundModelView{Value: "", Label: wd.T(words.KeyPgNone), Selected: req.model2 == ""})
	for _, e := range h.cfg.Models.Menu() {
		v.Models = append(v.Models, view.PlaygroundModelView{Value: e.Name, Label: e.Label, Selected: e.Name == req.model})
		v.Models2 = append(v.Models2, view.PlaygroundModelView{Value: e.Name, Label: e.Label, Selected: e.Name == req.model2})
	}
	return v
}

// langURL is the page in lang with the same models. The text stays
// behind (the address could not hold a long one): the script adds it as
// the learner types.
func langURL(req request, lang string) string {
	u := "/tokenize?lang=" + lang
	if req.model != "" {
		u += "&model=" + urlEscape(req.model)
	}
	if req.model2 != "" {
		u += "&model2=" + urlEscape(req.model2)
	}
	return u
}

// sizeText writes a size in bytes for the page: 512 bytes, 8 KiB, 9.5 KiB.
func sizeText(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " bytes"
	case n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// clip shortens s to at most n bytes of whole characters, for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// pieceText writes the token id as the page does: its bytes, marked.
func pieceText(tok tokenizer.Tokenizer, id int) string {
	return marks.Token(string(tok.TokenBytes(id)))
}
