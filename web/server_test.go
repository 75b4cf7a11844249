package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/trace"
	"tracer/web"
	"tracer/web/internal/testsupport"
)

// newServer serves the handler of a new web.Server for the test.
func newServer(t *testing.T, cfg web.Config) *httptest.Server {
	t.Helper()
	srv, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

var sessionAttr = regexp.MustCompile(`data-session="([0-9a-f]+)"`)

// openPage loads the page and returns its HTML and session id.
func openPage(t *testing.T, ts *httptest.Server) (string, string) {
	t.Helper()
	res, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /: got status %d: %s", res.StatusCode, body)
	}
	m := sessionAttr.FindSubmatch(body)
	if m == nil {
		t.Fatal("GET /: no session id in the page")
	}
	return string(body), string(m[1])
}

// upload posts a file as the page's form does. asJSON sets the Accept
// header the page's script sends.
func upload(t *testing.T, ts *httptest.Server, session, name string, data []byte, asJSON bool) (*http.Response, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("trace", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/import?session="+session, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if asJSON {
		req.Header.Set("Accept", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

type reply struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Count   int    `json:"count"`
	HTML    string `json:"html"`
	Message string `json:"message"`
}

func TestPage(t *testing.T) {
	ts := newServer(t, web.Config{})
	page, _ := openPage(t, ts)
	for _, id := range []string{"step-next", "step-prev", "step-index", "toy-table", "code-line-active", "trace-import", "trace-export", "annotation", "error-message"} {
		if !strings.Contains(page, `data-testid="`+id+`"`) {
			t.Errorf("the page has no data-testid %q", id)
		}
	}
	if !strings.Contains(page, "Moment 1 of 10") || !strings.Contains(page, `data-testid="output-text"></span>`) {
		t.Errorf("the page should open at moment 1 of 10 with the output text empty")
	}
	for _, asset := range regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`).FindAllStringSubmatch(page, -1) {
		res, err := http.Get(ts.URL + strings.ReplaceAll(asset[1], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: got status %d, cache %q; want 200 and immutable", asset[1], res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
	res, err := http.Get(ts.URL + "/static/missing.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("missing asset: got status %d, want 404", res.StatusCode)
	}
}

func TestImportMalformed(t *testing.T) {
	const limit = 64 << 10
	ts := newServer(t, web.Config{MaxTraceSize: limit})
	_, session := openPage(t, ts)
	good := testsupport.ToyJSON(t)
	outside := bytes.Replace(good, []byte(`"new_ids": [`), []byte(`"new_ids": [ 99,`), 1)
	outside = bytes.Replace(outside, []byte(`"ids": [`+"\n   0,"), []byte(`"ids": [`+"\n   0, 99,"), 1)
	huge := append(bytes.TrimRight(good, "}\n"), []byte(`, "padding": "`+strings.Repeat("x", limit)+`"}`)...)
	cases := []struct {
		name   string
		data   []byte
		status int
		says   string
	}{
		{"truncated", good[:len(good)/2], http.StatusBadRequest, "truncated JSON"},
		{"wrong format", bytes.Replace(good, []byte(trace.Format), []byte("tracer/v9"), 1), http.StatusBadRequest, `bad file format "tracer/v9"`},
		{"id outside vocab", outside, http.StatusBadRequest, "outside the vocabulary"},
		{"over the limit", huge, http.StatusRequestEntityTooLarge, "larger than the import limit of 64 KiB"},
		{"not json", []byte("hello"), http.StatusBadRequest, "not a tracer trace"},
		{"empty", nil, http.StatusBadRequest, "empty input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body := upload(t, ts, session, "bad.json", c.data, true)
			var r reply
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatalf("reply is not JSON: %v: %s", err, body)
			}
			if res.StatusCode != c.status || r.Type != "error" || !strings.Contains(r.Message, c.says) || !strings.Contains(r.Message, "bad.json") {
				t.Errorf("got %d %+v, want %d and an error naming bad.json that says %q", res.StatusCode, r, c.status, c.says)
			}
			// Without the page's script, the form post gets the page back
			// with the error shown.
			res, body = upload(t, ts, session, "bad.json", c.data, false)
			page := string(body)
			if res.StatusCode != c.status || !strings.Contains(page, `data-testid="error-message">Could not import bad.json`) {
				t.Errorf("form post: got %d, want %d and the page with a visible error", res.StatusCode, c.status)
			}
			if !strings.Contains(page, "Moment 1 of 10") {
				t.Errorf("form post: the page lost its trace")
			}
		})
	}
	t.Run("no file", func(t *testing.T) {
		req, _ := http.NewRequest("POST", ts.URL+"/import?session="+session, strings.NewReader("--x--\r\n"))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		req.Header.Set("Accept", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("got status %d, want 400", res.StatusCode)
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		res, body := upload(t, ts, "nope", "t.json", good, true)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "reload the page") {
			t.Errorf("got %d %s, want 404 asking to reload", res.StatusCode, body)
		}
	})
}

func TestImportAndExport(t *testing.T) {
	ts := newServer(t, web.Config{})
	_, session := openPage(t, ts)
	good := testsupport.ToyJSON(t)

	res, body := upload(t, ts, session, "lesson.json", good, true)
	var r reply
	if err := json.Unmarshal(body, &r); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("got %d %s, want 200 and a view", res.StatusCode, body)
	}
	if r.Type != "view" || r.Index != 0 || r.Count != 10 || !strings.Contains(r.HTML, "imported lesson.json") {
		t.Errorf("got %+v, want the imported lesson at moment 0 of 10", r)
	}

	// A trace from another model kind is stepped through step by step.
	other := bytes.Replace(good, []byte(`"kind": "toy"`), []byte(`"kind": "hf"`), 1)
	_, body = upload(t, ts, session, "hf.json", other, true)
	json.Unmarshal(body, &r)
	if r.Count != 4 || !strings.Contains(r.HTML, "Step 1 of 4") || strings.Contains(r.HTML, "toy-table") {
		t.Errorf("non-toy import: got count %d, want 4 plain steps; html %s", r.Count, r.HTML)
	}

	res, err := http.Get(ts.URL + "/export?session=" + session)
	if err != nil {
		t.Fatal(err)
	}
	exported, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(res.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("export: Content-Disposition %q, want an attachment", res.Header.Get("Content-Disposition"))
	}
	tr, err := trace.Decode(exported)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if tr.Model.Kind != "hf" {
		t.Errorf("export: got model kind %q, want the imported trace (hf)", tr.Model.Kind)
	}

	// A plain form post lands back on the page of the same session.
	res, _ = upload(t, ts, session, "lesson.json", good, false)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/?session="+session {
		t.Errorf("form post: got %d to %q, want 303 to the session's page", res.StatusCode, loc)
	}

	res, err = http.Get(ts.URL + "/export?session=nope")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("export of an unknown session: got %d, want 404", res.StatusCode)
	}
}

func TestImportCustomToyTable(t *testing.T) {
	// A toy trace from a table the server does not know is narrated from the
	// rows the trace recorded.
	ts := newServer(t, web.Config{})
	_, session := openPage(t, ts)
	m, err := models.Open("toy")
	if err != nil {
		t.Fatal(err)
	}
	in := models.Input{Texts: []string{"I"}}
	n := 1
	req, err := m.Request(in, &engine.Settings{MaxNewTokens: &n})
	if err != nil {
		t.Fatal(err)
	}
	req.Record = true
	tr, err := engine.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	tr.Model.Name = "someone else's table"
	tr.Steps[0].Rows[0].Candidates[1].Token = "drink"
	var b bytes.Buffer
	trace.Write(&b, tr)
	_, body := upload(t, ts, session, "custom.json", b.Bytes(), true)
	var r reply
	json.Unmarshal(body, &r)
	if r.Type != "view" || !strings.Contains(r.HTML, `data-testid="toy-table"`) || !strings.Contains(r.HTML, "drink") {
		t.Errorf("got %+v, want a walkthrough whose table shows the recorded row", r)
	}
}
