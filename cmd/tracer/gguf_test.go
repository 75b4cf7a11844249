package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"tracer/engine/refdata"
	"tracer/trace"
)

// TestGGUFRunMatchesLlamaCpp: tracer run on GGUF files gives llama-server's
// greedy ids (llama-cpp-reference.json, first prompt of each file).
func TestGGUFRunMatchesLlamaCpp(t *testing.T) {
	dir := refdata.Need(t, "models")
	var ref struct {
		Models map[string]struct {
			File  string `json:"file"`
			Cases []struct {
				Prompt string `json:"prompt"`
				NewIDs []int  `json:"new_ids"`
			} `json:"cases_kv_f32"`
		} `json:"models"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "llama-cpp-reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stories260K-f16", "tiny-random-llama-q8_0", "tiny-random-llama-q4_0", "k256-random-llama-q4_k_m"} {
		t.Run(name, func(t *testing.T) {
			m := ref.Models[name]
			c := m.Cases[0]
			out, errOut, code := tracer(t, "", "run", "--model", filepath.Join(dir, m.File), "--prompt", c.Prompt,
				"--max-new-tokens", strconv.Itoa(len(c.NewIDs)), "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			tr, err := trace.Decode([]byte(out))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tr.Output.NewIDs, c.NewIDs) {
				t.Errorf("got new ids %v, want llama.cpp's %v", tr.Output.NewIDs, c.NewIDs)
			}
		})
	}
}

func TestGGUFInfoShowsTensorTypes(t *testing.T) {
	path := refdata.Need(t, "models/tiny-random-llama/gguf/model-q4_0.gguf")
	out, errOut, code := tracer(t, "", "info", "--model", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kind                gguf", "dtype               q4_0", "Q4_0", "Q8_0              34816 bytes in 1 tensor", "F32"} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
	js, errOut, code := tracer(t, "", "info", "--model", path, "--json")
	var got struct {
		DType string `json:"dtype"`
		Types []struct {
			Type  string `json:"type"`
			Bytes int64  `json:"bytes"`
		} `json:"tensor_types"`
	}
	if err := json.Unmarshal([]byte(js), &got); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, errOut)
	}
	if got.DType != "q4_0" || len(got.Types) != 3 || got.Types[0].Type != "Q4_0" {
		t.Errorf("got %+v, want dtype q4_0 and three types, Q4_0 first", got)
	}
}

// TestGGUFBadFileCLI: a truncated or hostile GGUF is one clear line on
// stderr and a non-zero exit, never a panic.
func TestGGUFBadFileCLI(t *testing.T) {
	data, err := os.ReadFile(refdata.Need(t, "models/stories260K/stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	huge := slices.Clone(data[:24])
	copy(huge[16:], []byte{0, 0, 0, 0, 0, 0, 0, 0x10}) // 2^60 metadata entries
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", data[:len(data)/2], "runs past the end of the file"},
		{"2^60 metadata entries", huge, "metadata count 1152921504606846976 cannot fit"},
		{"not GGUF", []byte("hello, world"), "not a GGUF file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.gguf")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"info", "run"} {
				out, errOut, code := tracer(t, "", cmd, "--model", path)
				if code == 0 || out != "" || strings.Contains(errOut, "panic") || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
					t.Errorf("%s: got exit %d, stdout %q, stderr %q; want one line containing %q and a non-zero exit", cmd, code, out, errOut, c.want)
				}
			}
		})
	}
}

// TestGGUFOllamaModel runs a model named ollama:NAME:TAG from a fake
// Ollama store given by OLLAMA_MODELS.
func TestGGUFOllamaModel(t *testing.T) {
	data, err := os.ReadFile(refdata.Need(t, "models/stories260K/stories260K-f16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	const hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	manifest := filepath.Join(root, "manifests", "registry.ollama.ai", "library", "stories", "260k")
	for path, body := range map[string][]byte{
		filepath.Join(root, "blobs", "sha256-"+hex): data,
		manifest: []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + hex + `","size":` + strconv.Itoa(len(data)) + `}]}`),
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("OLLAMA_MODELS", root)
	out, errOut, code := tracer(t, "", "run", "--model", "ollama:stories:260k", "--prompt", "Once upon a time", "--max-new-tokens", "8")
	if code != 0 || out != ", there was a little girl\n" {
		t.Errorf("got %q (stderr %q, exit %d), want \", there was a little girl\\n\"", out, errOut, code)
	}
	_, errOut, code = tracer(t, "", "run", "--model", "ollama:stories:latest")
	if code == 0 || !strings.Contains(errOut, "no Ollama manifest") {
		t.Errorf("missing tag: got exit %d, stderr %q, want an error naming the missing manifest", code, errOut)
	}
}
