package playground

import (
	"errors"
	"net/url"
	"strings"

	"tracer/engine/tokenizer"
	"tracer/web/catalog"
	"tracer/web/marks"
)

// Token is one token of a text, as the playground shows it.
type Token struct {
	ID      int
	Text    string             // as the page writes it (marks): its bytes, ␣ for a space; a special token's name
	Vocab   string             // the vocabulary's spelling, marked, when it differs from Text (GPT-2's Ġ)
	Hex     string             // its bytes in hex, "48 65"
	Special bool               // a special or added token
	Build   tokenizer.Building // how encoding built it
}

// Tokenize encodes text as a run's text prompt is encoded, special
// tokens added (Encode(text, true)), and explains each token.
func Tokenize(tok tokenizer.Tokenizer, text string) ([]Token, error) {
	ids, err := tok.Encode(text, true)
	if err != nil {
		return nil, err
	}
	builds := map[int]tokenizer.Building{}
	out := make([]Token, 0, len(ids))
	for _, id := range ids {
		b, ok := builds[id]
		if !ok {
			b = tokenizer.Explain(tok, id)
			builds[id] = b
		}
		raw := tok.TokenBytes(id)
		special := tok.IsSpecial(id)
		t := Token{ID: id, Text: marks.Token(string(raw)), Hex: hexBytes(raw), Special: special || b.Kind == tokenizer.BuildAdded, Build: b}
		if special {
			// llama2.c stores BOS as "\n<s>\n": the name reads better bare.
			t.Text = marks.TokenOrID(strings.TrimSpace(tok.Token(id)), id)
		}
		if v := marks.Token(tok.Token(id)); v != t.Text && !special {
			t.Vocab = v
		}
		out = append(out, t)
	}
	return out, nil
}

// hexBytes writes bytes in hex, one pair a byte: "e0 a4 a8".
func hexBytes(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 3*len(b))
	for i, x := range b {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, digits[x>>4], digits[x&15])
	}
	return string(out)
}

// FromCatalog is the catalog's menu and its models' tokenizers: the one a
// run on the model uses, opened (and kept) by the catalog.
func FromCatalog(c *catalog.Catalog) Models { return catalogModels{c} }

type catalogModels struct{ c *catalog.Catalog }

func (m catalogModels) Menu() []catalog.Entry { return m.c.Menu() }

func (m catalogModels) Tokenizer(name string) (tokenizer.Tokenizer, error) {
	if strings.HasPrefix(name, catalog.ServerPrefix) {
		return nil, ErrServer
	}
	l, err := m.c.Open(name)
	if err != nil {
		return nil, errors.New(m.c.Redact(err.Error())) // pages never learn the server's paths
	}
	if l.Model != nil && l.Model.Info().Kind == "toy" {
		return nil, ErrToy
	}
	if l.Tokenizer == nil {
		return nil, ErrNoTokenizer
	}
	return l.Tokenizer, nil
}

// urlEscape escapes a query value.
func urlEscape(s string) string { return url.QueryEscape(s) }
