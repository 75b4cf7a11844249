package hub

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Ref
		ok   bool
	}{
		{"HuggingFaceTB/SmolLM2-135M", Ref{"HuggingFaceTB/SmolLM2-135M", "main"}, true},
		{"openai-community/gpt2@v1.0", Ref{"openai-community/gpt2", "v1.0"}, true},
		{"gpt2", Ref{"gpt2", "main"}, true},
		{"org/name@refs/pr/1", Ref{"org/name", "refs/pr/1"}, true},
		{"org/name@" + strings.Repeat("0", 40), Ref{"org/name", strings.Repeat("0", 40)}, true},
		{"", Ref{}, false},
		{"org/", Ref{}, false},
		{"/name", Ref{}, false},
		{"a/b/c", Ref{}, false},
		{"org/na me", Ref{}, false},
		{"org--x/name", Ref{}, false},
		{"org/..", Ref{}, false},
		{"org/-name", Ref{}, false},
		{"org/name@", Ref{}, false},
		{"org/name@../../x", Ref{}, false},
		{"org/name@/abs", Ref{}, false},
		{"org/" + strings.Repeat("x", 100), Ref{}, false},
	} {
		got, err := ParseRef(tc.spec)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v, ok %v", tc.spec, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"org/name", "org/name@main", "gpt2@refs/pr/1", "a/b@../c", "org/x@a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		r, err := ParseRef(spec)
		if err != nil {
			return
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Errorf("ParseRef(%q) = %+v, but its String %q parses to %+v, %v", spec, r, r.String(), again, err)
		}
		// Whatever parses names a folder inside the cache.
		cache := filepath.FromSlash("/cache")
		for _, p := range []string{RepoDir(cache, r.Repo), repoCache{RepoDir(cache, r.Repo)}.ref(r.Revision)} {
			if rel, err := filepath.Rel(cache, p); err != nil || !filepath.IsLocal(rel) {
				t.Errorf("%q leads outside the cache: %s", spec, p)
			}
		}
	})
}

// FuzzParseModelInfo: whatever the Hub answers, parsing does not panic and
// every file name it accepts stays inside the snapshot folder.
func FuzzParseModelInfo(f *testing.F) {
	for _, s := range []string{
		`{"sha": "` + strings.Repeat("a", 40) + `", "siblings": [{"rfilename": "config.json"}, {"rfilename": "sub/model.safetensors"}]}`,
		`{"siblings": [{"rfilename": "../../etc/passwd"}]}`,
		`{"siblings": null}`, `[]`, `{`, `{"sha": 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := parseModelInfo(body)
		if err != nil {
			return
		}
		for _, name := range l.files {
			if !filepath.IsLocal(filepath.FromSlash(name)) || strings.Contains(name, "\\") {
				t.Errorf("accepted %q, which leaves the snapshot", name)
			}
		}
		if l.commit != "" && !IsCommit(l.commit) {
			t.Errorf("accepted commit %q", l.commit)
		}
	})
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"weight_map": {"a": "model-00001-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map": {"a": "../x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		shards, err := parseIndex(body)
		if err != nil {
			return
		}
		for _, s := range shards {
			if !filepath.IsLocal(filepath.FromSlash(s)) {
				t.Errorf("accepted shard %q, which leaves the snapshot", s)
			}
		}
	})
}
