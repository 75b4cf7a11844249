package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"tracer/engine/refdata"
)

// rawFile builds a file from a literal JSON header and data, without the
// padding or checks of Write.
func rawFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// lengthPlus adds extra to a file's header length field.
func lengthPlus(file []byte, extra uint64) []byte {
	out := slices.Clone(file)
	binary.LittleEndian.PutUint64(out, binary.LittleEndian.Uint64(out)+extra)
	return out
}

func f32Bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// sampleFile is a small valid file with a matrix, a vector and a scalar.
func sampleFile(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	err := Write(&b, []Tensor{
		{Name: "w", DType: F32, Shape: []int{2, 3}, Data: f32Bytes(1, 2, 3, 4, 5, 6)},
		{Name: "b", DType: BF16, Shape: []int{2}, Data: []byte{0x80, 0x3f, 0x00, 0x40}},
		{Name: "s", DType: F16, Shape: []int{}, Data: []byte{0x00, 0x3c}},
	}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestWriteParseRoundTrip(t *testing.T) {
	data := sampleFile(t)
	if hl := binary.LittleEndian.Uint64(data); (8+hl)%8 != 0 {
		t.Errorf("data region starts at %d, want a multiple of 8", 8+hl)
	}
	f, err := Parse("sample.safetensors", data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Names(), []string{"w", "b", "s"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := f.Metadata["format"]; got != "pt" {
		t.Errorf("metadata format = %q, want pt", got)
	}
	tests := []struct {
		name  string
		dtype DType
		shape []int
		data  []byte
	}{
		{"w", F32, []int{2, 3}, f32Bytes(1, 2, 3, 4, 5, 6)},
		{"b", BF16, []int{2}, []byte{0x80, 0x3f, 0x00, 0x40}},
		{"s", F16, []int{}, []byte{0x00, 0x3c}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := f.Tensor(tt.name)
			if !ok {
				t.Fatalf("tensor %q missing", tt.name)
			}
			if got.DType != tt.dtype || !slices.Equal(got.Shape, tt.shape) || !bytes.Equal(got.Data, tt.data) {
				t.Errorf("got %s %v %x, want %s %v %x", got.DType, got.Shape, got.Data, tt.dtype, tt.shape, tt.data)
			}
			if got.File != "sample.safetensors" {
				t.Errorf("File = %q", got.File)
			}
		})
	}
	if _, ok := f.Tensor("nope"); ok {
		t.Error("Tensor(nope) found")
	}
}

func TestOpenMapsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := os.WriteFile(path, sampleFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := f.Tensor("w")
	if got := math.Float32frombits(binary.LittleEndian.Uint32(w.Data[20:])); got != 6 {
		t.Errorf("w[1][2] = %v, want 6", got)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "absent.safetensors")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("Open of a directory succeeded")
	}
}

func TestParseErrors(t *testing.T) {
	valid := sampleFile(t)
	hugeLen := make([]byte, 16)
	binary.LittleEndian.PutUint64(hugeLen, 1<<40)
	tests := []struct {
		name   string
		data   []byte
		tensor string // the tensor the error must name
		want   string // a substring of the message
	}{
		{"empty", nil, "", "too short"},
		{"short length field", []byte{1, 2, 3}, "", "too short"},
		{"header past end", rawFile(`{}`, nil)[:9], "", "header length 2 is larger than the file (9 bytes)"},
		{"header length absurd", hugeLen, "", "header length 1099511627776 is larger than the file (16 bytes)"},
		{"header length one past the end", lengthPlus(rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), 5), "", "header length 59 is larger than the file (66 bytes)"},
		{"header length reaches into the data", lengthPlus(rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, []byte("abcd")), 4), "", "header length 58 is larger than its JSON object, which ends at byte 54"},
		{"truncated data", valid[:len(valid)-3], "b", "run past the end of the file"},
		{"not JSON", rawFile(`{"a":`, nil), "a", "bad header entry"},
		{"bad JSON", rawFile(`{1: 2}`, nil), "", "bad JSON header"},
		{"not an object", rawFile(`[1, 2]`, nil), "", "bad JSON header"},
		{"trailing junk", rawFile(`{} {}`, nil), "", "header length 5 is larger than its JSON object, which ends at byte 2"},
		{"entry not an object", rawFile(`{"w": 3}`, nil), "w", "bad header entry"},
		{"missing offsets", rawFile(`{"w":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), "w", "needs dtype, shape and data_offsets"},
		{"unknown dtype", rawFile(`{"w":{"dtype":"Q4_K","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), "w", `unknown dtype "Q4_K"`},
		{"negative dim", rawFile(`{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), "w", "negative dimension"},
		{"huge shape", rawFile(`{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}`, make([]byte, 4)), "w", "impossibly large"},
		{"fractional offset", rawFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4.5]}}`, make([]byte, 8)), "w", "bad header entry"},
		{"three offsets", rawFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 8)), "w", "want [begin, end]"},
		{"reversed offsets", rawFile(`{"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}}`, make([]byte, 8)), "w", "not a valid range"},
		{"shape disagrees with span", rawFile(`{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}}`, make([]byte, 16)), "w", "needs 16 bytes but data_offsets [0 12] span 12"},
		{"offsets past end", rawFile(`{"lm_head.weight":{"dtype":"F32","shape":[1024],"data_offsets":[0,4096]}}`, make([]byte, 3000)), "lm_head.weight", "data_offsets [0 4096] run past the end of the file (3000 bytes of data"},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, make([]byte, 16)), "b", `overlap tensor "a"`},
		{"overlap hidden behind an empty tensor", rawFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"e":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"c":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, make([]byte, 16)), "c", `overlap tensor "a"`},
		{"duplicate name", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "a", "listed twice"},
		{"metadata not strings", rawFile(`{"__metadata__":{"n":1}}`, nil), "", "bad __metadata__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("model.safetensors", tt.data)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is a %T, want *Error", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "safetensors: model.safetensors: ") {
				t.Errorf("error %q does not name the file", msg)
			}
			if se.Tensor != tt.tensor {
				t.Errorf("error names tensor %q, want %q (%s)", se.Tensor, tt.tensor, msg)
			}
			if tt.tensor != "" && !strings.Contains(msg, `tensor "`+tt.tensor+`"`) {
				t.Errorf("error %q does not name tensor %q", msg, tt.tensor)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to contain %q", msg, tt.want)
			}
		})
	}
}

func TestParseAcceptsNonFloatBuffers(t *testing.T) {
	// A checkpoint may carry integer or boolean buffers; the parser checks
	// their layout and leaves refusing them to whoever wants floats.
	data := rawFile(`{"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},"m":{"dtype":"BOOL","shape":[3],"data_offsets":[16,19]}}`, make([]byte, 19))
	f, err := Parse("x.safetensors", data)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := f.Tensor("ids")
	if ids.DType.Float() || ids.DType.Size() != 8 {
		t.Errorf("I64: Float() = %v, Size() = %d", ids.DType.Float(), ids.DType.Size())
	}
}

func TestWriteRefusesBadData(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, []Tensor{{Name: "w", DType: F32, Shape: []int{2}, Data: make([]byte, 4)}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("Write with short data: %v, want an error naming w", err)
	}
	err = WriteHeader(&b, []Info{{Name: "w", DType: "NOPE", Shape: []int{2}}}, nil)
	if err == nil {
		t.Error("WriteHeader with an unknown dtype succeeded")
	}
}

// writeShard writes a safetensors file of F32 vectors named names.
func writeShard(t *testing.T, path string, names ...string) {
	t.Helper()
	var ts []Tensor
	for i, n := range names {
		ts = append(ts, Tensor{Name: n, DType: F32, Shape: []int{1}, Data: f32Bytes(float32(i))})
	}
	var b bytes.Buffer
	if err := Write(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenDir(t *testing.T) {
	tests := []struct {
		name   string
		shards map[string][]string
		index  string // "" for no index file
		want   []string
		err    string
	}{
		{
			name:   "single",
			shards: map[string][]string{"model.safetensors": {"b", "a"}},
			want:   []string{"a", "b"},
		},
		{
			name:   "sharded",
			shards: map[string][]string{"model-00001-of-00002.safetensors": {"a", "b"}, "model-00002-of-00002.safetensors": {"c"}},
			index:  `{"metadata":{"total_size":12},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}}`,
			want:   []string{"a", "b", "c"},
		},
		{
			name:   "index names a tensor its shard lacks",
			shards: map[string][]string{"s1.safetensors": {"a"}, "s2.safetensors": {"c"}},
			index:  `{"weight_map":{"a":"s1.safetensors","c":"s1.safetensors"}}`,
			err:    `s1.safetensors: tensor "c": missing`,
		},
		{
			name:   "tensor in two shards",
			shards: map[string][]string{"s1.safetensors": {"a"}, "s2.safetensors": {"a"}},
			index:  `{"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}}`,
			err:    `tensor "a": also in`,
		},
		{
			name:  "shard outside the folder",
			index: `{"weight_map":{"a":"../evil.safetensors"}}`,
			err:   `tensor "a": shard "../evil.safetensors" is not a file name`,
		},
		{
			name:   "missing shard",
			shards: map[string][]string{"s1.safetensors": {"a"}},
			index:  `{"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}}`,
			err:    "s2.safetensors: open",
		},
		{
			name:  "bad index",
			index: `{"weight_map":`,
			err:   "bad index JSON",
		},
		{
			name: "no weights",
			err:  "no model.safetensors",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for file, names := range tt.shards {
				writeShard(t, filepath.Join(dir, file), names...)
			}
			if tt.index != "" {
				if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(tt.index), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := OpenDir(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("OpenDir error = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.Names(); !slices.Equal(got, tt.want) {
				t.Errorf("Names() = %v, want %v", got, tt.want)
			}
			for _, n := range tt.want {
				if ts, ok := c.Tensor(n); !ok || len(ts.Data) != 4 {
					t.Errorf("Tensor(%q) = %v, %v", n, ts, ok)
				}
			}
		})
	}
}

func TestGoldenCheckpoint(t *testing.T) {
	c, err := OpenDir(refdata.Need(t, "golden/tiny-gpt2"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, ok := c.Tensor("transformer.h.0.attn.c_attn.weight")
	if !ok || w.DType != F32 || !slices.Equal(w.Shape, []int{64, 192}) {
		t.Errorf("c_attn.weight = %s %v (found %v), want F32 [64 192]", w.DType, w.Shape, ok)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sampleFile(f))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, make([]byte, 16)))
	f.Add(rawFile(`{"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add([]byte{})
	f.Add(lengthPlus(sampleFile(f), 1))
	f.Add(lengthPlus(sampleFile(f), 1<<20))
	f.Add(lengthPlus(rawFile(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.safetensors", data)
		if len(data) >= 8 {
			// A length field past the end of the file is reported as such.
			if n := binary.LittleEndian.Uint64(data); n > uint64(len(data)-8) {
				if err == nil || !strings.Contains(err.Error(), "is larger than the file") {
					t.Fatalf("header length %d in a %d-byte file: got error %v, want \"is larger than the file\"", n, len(data), err)
				}
			}
		}
		if err != nil {
			return
		}
		for _, n := range file.Names() {
			ts, ok := file.Tensor(n)
			if !ok {
				t.Fatalf("listed tensor %q not found", n)
			}
			if int64(len(ts.Data)) != ts.Elements()*int64(ts.DType.Size()) {
				t.Fatalf("tensor %q: %d bytes for shape %v of %s", n, len(ts.Data), ts.Shape, ts.DType)
			}
		}
	})
}
