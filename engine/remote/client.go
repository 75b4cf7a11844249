// Package remote records generation from a serving engine (llama.cpp's
// server, vLLM, SGLang, Ollama or any OpenAI-compatible server) as a tracer
// trace: a server is one more model, whose forward pass is an HTTP request
// answered with the log-probabilities of the chosen token and its top
// alternatives.
//
// Plain mode asks for one streamed completion and turns each token into a
// step. Step mode asks for one token per request (the context sent as ids
// where the API takes them), so each step's distribution is the model's own
// at that position and a forced token continues the run as a branch would.
package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Errors a caller can tell apart with errors.Is.
var (
	ErrRefused      = errors.New("connection refused: is the server running at that address?")
	ErrAuth         = errors.New("the server refused the API key")
	ErrUnknownModel = errors.New("the server has no such model")
	ErrNoLogprobs   = errors.New("the server ignored the request for log-probabilities")
	ErrStreamCut    = errors.New("the stream ended in the middle of the answer")
	ErrBadAnswer    = errors.New("the server's answer is not what its API promises")
	// ErrNoChatTemplate means step mode on a chat needs the server's chat
	// template, and the server does not tell it.
	ErrNoChatTemplate = errors.New("the server does not expose its chat template")
	// ErrStepChat means a chat cannot be recorded in step mode on this
	// server (its chat template is missing or broken): record it in plain
	// mode (Request.Step false).
	ErrStepChat = errors.New("step mode on a chat needs the model's chat template")
	// ErrChooseModel means the server serves several models and the
	// request named none (Client.Model empty).
	ErrChooseModel = errors.New("choose one of them")
	// ErrTimeout means the server gave no answer within the client's time.
	ErrTimeout = errors.New("no answer in time")
	// ErrNeedsStepMode means the request asks for what only step mode can
	// do (forced tokens) without Request.Step.
	ErrNeedsStepMode = errors.New("forced tokens need step mode: a plain completion cannot be told which token to take")
	// ErrNeedsIDs means forced tokens in step mode need the prompt as token
	// ids on a server that does not tokenize.
	ErrNeedsIDs = errors.New("forced tokens need the prompt as token ids, or a server that tokenizes (llama.cpp)")
	// ErrNeedsText means a prompt of ids cannot be extended in step mode,
	// since the server gave no id for a token: give the prompt as text.
	ErrNeedsText = errors.New("the prompt given as ids cannot be extended: give the prompt as text")
)

// Limits on what a server may send.
const (
	maxBody      = 64 << 20 // bytes of one non-streamed answer
	maxEvent     = 4 << 20  // bytes of one server-sent event line
	maxTopLogits = 1000     // alternatives per step tracer accepts
)

// Engines tracer knows by their /v1/models answer (Client.Engine).
const (
	EngineLlamaCpp = "llama.cpp"
	EngineVLLM     = "vllm"
	EngineSGLang   = "sglang"
	EngineOllama   = "ollama"
	EngineOpenAI   = "openai" // any other OpenAI-compatible server
)

// Config says how to reach a server.
type Config struct {
	URL     string        // base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is accepted)
	Model   string        // the server's model name; empty: its only model
	Engine  string        // EngineLlamaCpp, ...; empty: from /v1/models' owned_by
	Key     string        // API key sent as a bearer token; never recorded
	Timeout time.Duration // per request; 0: 5 minutes
	Retries int           // extra tries after a connection error or a 502/503/504; 0: 2
	HTTP    *http.Client  // nil: a client with Timeout (TLS from the system's roots)
}

// Client talks to one model on one server.
type Client struct {
	base    *url.URL
	key     string
	http    *http.Client
	retries int

	Engine    string // EngineLlamaCpp, EngineVLLM, ...
	Model     string // the server's name for the model
	VocabSize int    // 0 when the server does not say
}

// Dial checks that the server answers and has the model, and learns which
// engine it is.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	c, list, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.pick(list, cfg.Model, cfg.Engine); err != nil {
		return nil, err
	}
	return c, nil
}

// MaxModels is the most models Models lists of one server: a menu of more
// would not be read, and a hostile list must not cost the caller more.
const MaxModels = 1000

// maxExcerpt is the longest excerpt of a server's error body an error
// quotes, in bytes.
const maxExcerpt = 120

// Models lists the models the server offers (one /v1/models request), at
// most MaxModels of them in its order, each as a Client ready to record
// from; cfg.Model is ignored.
func Models(ctx context.Context, cfg Config) ([]*Client, error) {
	base, list, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if len(list.Data) == 0 {
		return nil, fmt.Errorf("remote: %s/v1/models lists no model: %w", base.URL(), ErrUnknownModel)
	}
	n := min(len(list.Data), MaxModels)
	out := make([]*Client, 0, n)
	for i := range n {
		c := *base
		c.use(list, i, cfg.Engine)
		out = append(out, &c)
	}
	return out, nil
}

// CheckURL reports whether raw is a server URL Dial accepts, without
// asking the server anything. The error never repeats a password.
func CheckURL(raw string) error {
	_, err := newClient(Config{URL: raw})
	return err
}

// newClient checks cfg and makes a client that has not asked the server
// anything yet.
func newClient(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote: server URL %q: want http://HOST:PORT or https://HOST", redact(cfg.URL))
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	c := &Client{base: u, key: cfg.Key, http: cfg.HTTP, retries: cfg.Retries}
	if c.retries <= 0 {
		c.retries = 2
	}
	if c.http == nil {
		t := cfg.Timeout
		if t <= 0 {
			t = 5 * time.Minute
		}
		// A redirect is not followed: it could carry the key to another
		// host or port. The 3xx answer is then the server's error.
		c.http = &http.Client{Timeout: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	switch cfg.Engine {
	case "", EngineLlamaCpp, EngineVLLM, EngineSGLang, EngineOllama, EngineOpenAI:
	default:
		return nil, fmt.Errorf("remote: engine %q: want llama.cpp, vllm, sglang, ollama or openai", cfg.Engine)
	}
	return c, nil
}

// URL returns the server's base URL without credentials.
func (c *Client) URL() string {
	u := *c.base
	u.User = nil
	return u.String()
}

// modelList is a /v1/models answer.
type modelList struct {
	Data []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
		Meta    struct {
			NVocab int `json:"n_vocab"`
		} `json:"meta"`
	} `json:"data"`
}

// connect makes the client of cfg and reads the server's /v1/models.
func connect(ctx context.Context, cfg Config) (*Client, modelList, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, modelList{}, err
	}
	list, err := c.list(ctx)
	if err != nil {
		return nil, modelList{}, err
	}
	return c, list, nil
}

// list reads /v1/models.
func (c *Client) list(ctx context.Context) (modelList, error) {
	var list modelList
	err := c.do(ctx, http.MethodGet, "/v1/models", nil, &list)
	return list, err
}

// pick sets the model to use from a /v1/models answer, the engine (engine
// when not empty, else the one that owns the model) and, from llama.cpp,
// the vocabulary size.
func (c *Client) pick(list modelList, want, engine string) error {
	if len(list.Data) == 0 {
		return fmt.Errorf("remote: %s/v1/models lists no model: %w", c.URL(), ErrUnknownModel)
	}
	i := -1
	for j, m := range list.Data {
		if m.ID == want {
			i = j
			break
		}
	}
	switch {
	case want == "" && len(list.Data) == 1:
		i = 0
	case want == "":
		return fmt.Errorf("remote: the server has %d models (%s): %w", len(list.Data), list.names(), ErrChooseModel)
	case i < 0:
		return fmt.Errorf("remote: model %q: %w (it lists %s)", want, ErrUnknownModel, list.names())
	}
	c.use(list, i, engine)
	return nil
}

// use sets the model to use to entry i of list (see pick).
func (c *Client) use(list modelList, i int, engine string) {
	m := list.Data[i]
	c.Model, c.VocabSize = m.ID, m.Meta.NVocab
	switch owner := strings.ToLower(m.OwnedBy); {
	case owner == "llamacpp":
		c.Engine = EngineLlamaCpp
	case owner == "vllm":
		c.Engine = EngineVLLM
	case owner == "sglang":
		c.Engine = EngineSGLang
	case owner == "ollama" || owner == "library":
		c.Engine = EngineOllama
	default:
		c.Engine = EngineOpenAI
	}
	if engine != "" {
		c.Engine = engine
	}
}

// names lists the models of a /v1/models answer for a message: the first
// few, then how many more.
func (l modelList) names() string {
	const shown = 8
	var names []string
	for i, m := range l.Data {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(l.Data)-shown))
			break
		}
		names = append(names, m.ID)
	}
	return strings.Join(names, ", ")
}

// post sends a JSON request and decodes the JSON answer into out.
func (c *Client) post(ctx context.Context, path string, body, out any) error {
	return c.do(ctx, http.MethodPost, path, body, out)
}

// do sends a request, with bounded retries on connection errors and
// 502/503/504, and decodes the answer into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("remote: %s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxBody {
		return fmt.Errorf("remote: %s %s: the answer is larger than %d MiB: %w", method, path, maxBody>>20, ErrBadAnswer)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("remote: %s %s: %v: %w", method, path, err, ErrBadAnswer)
	}
	return nil
}

// send sends a request and returns a 2xx response whose body the caller
// closes; other statuses become errors that say what to do.
func (c *Client) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("remote: %s: %w", path, err)
		}
	}
	u := c.base.JoinPath(path)
	var lastErr error
	for try := 0; try <= c.retries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(try*try) * 200 * time.Millisecond):
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(payload))
		if err != nil {
			return nil, fmt.Errorf("remote: %s: %w", path, err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				lastErr = fmt.Errorf("remote: %s: %w", c.URL(), ErrRefused)
				continue
			}
			var certErr *tls.CertificateVerificationError
			if errors.As(err, &certErr) {
				return nil, fmt.Errorf("remote: %s: the server's TLS certificate is not trusted (%v); if it is signed by your own CA, point SSL_CERT_FILE at that CA's PEM file", c.URL(), certErr.Err)
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, fmt.Errorf("remote: %s %s: %w (%v); the server may be busy: try again or allow it more time", method, path, ErrTimeout, stripURL(err))
			}
			lastErr = fmt.Errorf("remote: %s %s: %w", method, c.URL()+path, stripURL(err))
			continue
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		msg := errorMessage(resp)
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return nil, fmt.Errorf("remote: %s: HTTP %d %s: %w: give the key the server expects", path, resp.StatusCode, msg, ErrAuth)
		case http.StatusNotFound:
			if strings.Contains(strings.ToLower(msg), "model") {
				return nil, fmt.Errorf("remote: %s: HTTP 404 %s: %w", path, msg, ErrUnknownModel)
			}
			return nil, fmt.Errorf("remote: %s: HTTP 404 %s: the server has no such endpoint; is it an OpenAI-compatible server?", path, msg)
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			lastErr = fmt.Errorf("remote: %s: HTTP %d %s (still loading or overloaded?)", path, resp.StatusCode, msg)
			continue
		}
		if strings.Contains(strings.ToLower(msg), "model") && strings.Contains(strings.ToLower(msg), "not") {
			return nil, fmt.Errorf("remote: %s: HTTP %d %s: %w", path, resp.StatusCode, msg, ErrUnknownModel)
		}
		return nil, fmt.Errorf("remote: %s: HTTP %d %s", path, resp.StatusCode, msg)
	}
	return nil, fmt.Errorf("%w (after %d tries)", lastErr, c.retries+1)
}

// errorMessage reads an error answer's message: OpenAI's {"error":
// {"message": ...}}, vLLM's {"message": ...}, Ollama's {"error": "..."}, or
// the first bytes of the body. It closes the body.
func errorMessage(resp *http.Response) string {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return quoteShort(inner.Message)
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return quoteShort(s)
		case e.Message != "":
			return quoteShort(e.Message)
		case len(e.Detail) > 0:
			return quoteShort(string(e.Detail))
		}
	}
	return quoteShort(string(data))
}

func quoteShort(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxExcerpt {
		s = strings.ToValidUTF8(s[:maxExcerpt], "") + "..."
	}
	return fmt.Sprintf("%q", s)
}

// stripURL removes the URL (which may hold credentials) from a transport
// error.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact returns a URL without its user and password, for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.LastIndexByte(raw, '@'); i >= 0 {
			return "..." + raw[i:]
		}
		return raw
	}
	u.User = nil
	return u.String()
}
