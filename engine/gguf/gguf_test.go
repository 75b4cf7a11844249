package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"tracer/engine/refdata"
)

// builder writes GGUF bytes for tests.
type builder struct{ b []byte }

func (w *builder) u32(v uint32) *builder  { w.b = binary.LittleEndian.AppendUint32(w.b, v); return w }
func (w *builder) u64(v uint64) *builder  { w.b = binary.LittleEndian.AppendUint64(w.b, v); return w }
func (w *builder) str(s string) *builder  { w.u64(uint64(len(s))); w.b = append(w.b, s...); return w }
func (w *builder) raw(p ...byte) *builder { w.b = append(w.b, p...); return w }
func (w *builder) pad(a int) *builder {
	for len(w.b)%a != 0 {
		w.b = append(w.b, 0)
	}
	return w
}

// head starts a version-3 file with nt tensors and nkv metadata entries.
func head(nt, nkv uint64) *builder {
	w := &builder{}
	w.raw('G', 'G', 'U', 'F').u32(3).u64(nt).u64(nkv)
	return w
}

// small is a valid file: two metadata entries and one (2, 32) F32 tensor.
func small() []byte {
	w := head(1, 2)
	w.str("general.architecture").u32(uint32(TypeString)).str("llama")
	w.str("tokenizer.ggml.scores").u32(uint32(TypeArray)).u32(uint32(TypeFloat32)).u64(2).u32(math.Float32bits(1.5)).u32(math.Float32bits(-2))
	w.str("w").u32(2).u64(32).u64(2).u32(uint32(F32)).u64(0)
	w.pad(32)
	for i := 0; i < 64; i++ {
		w.u32(math.Float32bits(float32(i)))
	}
	return w.b
}

func TestGGUFParseSmall(t *testing.T) {
	f, err := Parse("small.gguf", small())
	if err != nil {
		t.Fatal(err)
	}
	arch, _, err := f.String("general.architecture")
	if err != nil || arch != "llama" {
		t.Errorf("got architecture %q (%v), want llama", arch, err)
	}
	sc, _, err := f.Float32s("tokenizer.ggml.scores")
	if err != nil || len(sc) != 2 || sc[0] != 1.5 || sc[1] != -2 {
		t.Errorf("got scores %v (%v), want [1.5 -2]", sc, err)
	}
	w, ok := f.Tensor("w")
	if !ok || len(w.Data) != 256 || f.DataOffset%32 != 0 {
		t.Fatalf("got tensor %v with %d bytes at data offset %d, want 256 bytes aligned to 32", ok, len(w.Data), f.DataOffset)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(w.Data[4*63:])); got != 63 {
		t.Errorf("got last element %v, want 63", got)
	}
}

// TestGGUFWriteRoundTrip: Write then Parse gives back the metadata of
// every value type and the tensors.
func TestGGUFWriteRoundTrip(t *testing.T) {
	meta := []KV{
		{"u8", TypeUint8, uint8(7)}, {"i8", TypeInt8, int8(-7)}, {"u16", TypeUint16, uint16(700)}, {"i16", TypeInt16, int16(-700)},
		{"u32", TypeUint32, uint32(70000)}, {"i32", TypeInt32, int32(-70000)}, {"f32", TypeFloat32, float32(1.5)},
		{"b", TypeBool, true}, {"s", TypeString, "héllo"}, {"u64", TypeUint64, uint64(1) << 40}, {"i64", TypeInt64, int64(-1) << 40},
		{"f64", TypeFloat64, 2.25}, {"general.alignment", TypeUint32, uint32(64)},
		{"strs", TypeArray, []string{"a", "", "c"}}, {"ints", TypeArray, []int32{1, -2}}, {"nested", TypeArray, []any{[]uint8{1}, []string{"x"}}},
	}
	tensors := []TensorInfo{
		{Name: "a", Dims: []uint64{32, 2}, Type: Q8_0, Data: bytes.Repeat([]byte{3}, 68)},
		{Name: "b", Dims: []uint64{3}, Type: F32, Data: bytes.Repeat([]byte{1}, 12)},
	}
	var buf bytes.Buffer
	if err := Write(&buf, meta, tensors, 0); err != nil {
		t.Fatal(err)
	}
	f, err := Parse("rt.gguf", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Alignment != 64 || f.DataOffset%64 != 0 || len(f.Meta) != len(meta) {
		t.Fatalf("got alignment %d, data offset %d, %d keys, want 64, a multiple of 64, %d", f.Alignment, f.DataOffset, len(f.Meta), len(meta))
	}
	for i, kv := range meta {
		if got := f.Meta[i]; got.Key != kv.Key || got.Type != kv.Type || fmt.Sprint(got.Value) != fmt.Sprint(kv.Value) {
			t.Errorf("key %d: got %q %s %v, want %q %s %v", i, got.Key, got.Type, got.Value, kv.Key, kv.Type, kv.Value)
		}
	}
	for _, want := range tensors {
		got, ok := f.Tensor(want.Name)
		if !ok || got.Type != want.Type || !bytes.Equal(got.Data, want.Data) || got.Offset%64 != 0 {
			t.Errorf("tensor %q: got %v %s %d bytes at %d, want %s %d bytes, aligned", want.Name, ok, got.Type, len(got.Data), got.Offset, want.Type, len(want.Data))
		}
	}
	if err := Write(&buf, []KV{{"x", TypeUint32, "not a number"}}, nil, 0); err == nil {
		t.Error("Write of a string as uint32: got no error, want one")
	}
}

func TestGGUFHostile(t *testing.T) {
	tensorFile := func(dims []uint64, typ Type, off uint64) []byte {
		w := head(1, 0)
		w.str("w").u32(uint32(len(dims)))
		for _, d := range dims {
			w.u64(d)
		}
		w.u32(uint32(typ)).u64(off)
		w.pad(32).raw(make([]byte, 64)...)
		return w.b
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a GGUF file"},
		{"wrong magic", []byte("GGML\x03\x00\x00\x00"), "not a GGUF file"},
		{"version 1", (&builder{}).raw('G', 'G', 'U', 'F').u32(1).u64(0).u64(0).b, "version 1 not supported"},
		{"no version", []byte("GGUF"), "version at byte 4"},
		{"version 9", (&builder{}).raw('G', 'G', 'U', 'F').u32(9).u64(0).u64(0).b, "version 9 not supported"},
		{"truncated header", head(0, 0).b[:12], "truncated"},
		{"2^60 metadata entries", head(0, 1<<60).b, "metadata count 1152921504606846976 cannot fit"},
		{"2^60 tensors", head(1<<60, 0).b, "tensor count 1152921504606846976 cannot fit"},
		{"key longer than the file", head(0, 1).u64(1 << 40).raw(make([]byte, 16)...).b, "over the limit"},
		{"string longer than the file", head(0, 1).str("k").u32(uint32(TypeString)).u64(1 << 62).b, "4611686018427387904 bytes long, over the limit of 8"},
		{"unknown value type", head(0, 1).str("k").u32(99).u64(0).b, "unknown value type 99"},
		{"array of 2^60", head(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1 << 60).b, "holds 1152921504606846976 elements"},
		{"string array of 2^60", head(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1 << 60).b, "holds 1152921504606846976 elements"},
		{"array of unknown type", head(0, 1).str("k").u32(uint32(TypeArray)).u32(77).u64(1).b, "unknown value type 77"},
		{"bad bool", head(0, 1).str("k").u32(uint32(TypeBool)).raw(7).b, "bool holding 7"},
		{"duplicate key", head(0, 2).str("k").u32(uint32(TypeUint8)).raw(1).str("k").u32(uint32(TypeUint8)).raw(1).b, `"k" appears twice`},
		{"bad alignment", head(0, 1).str("general.alignment").u32(uint32(TypeUint32)).u32(3).b, "general.alignment is 3"},
		{"offset past the end", tensorFile([]uint64{32}, F32, 1<<40), "runs past the end"},
		{"size past the end", tensorFile([]uint64{32, 1 << 20}, F32, 0), "runs past the end"},
		{"2^60 elements", tensorFile([]uint64{1 << 30, 1 << 30}, F32, 0), "product at most 2^48"},
		{"zero dimension", tensorFile([]uint64{0}, F32, 0), "each must be positive"},
		{"five dimensions", tensorFile([]uint64{1, 1, 1, 1, 1}, F32, 0), "5 dimensions"},
		{"unknown tensor type", tensorFile([]uint64{32}, 99, 0), "type 99, which tracer does not know"},
		{"row not whole blocks", tensorFile([]uint64{16}, Q8_0, 0), "not a multiple of the type's block of 32"},
		{"misaligned offset", tensorFile([]uint64{8}, F32, 4), "not a multiple of the alignment 32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.gguf", c.data)
			if err == nil {
				t.Fatalf("got no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.gguf") || !errors.Is(err, ErrFormat) {
				t.Errorf("got %q, want an ErrFormat naming bad.gguf and containing %q", err, c.want)
			}
		})
	}
}

// TestGGUFTypeNames: ggml's type ids, names and block sizes (ggml.c's
// type_traits) for the quantized types, the i-quants included.
func TestGGUFTypeNames(t *testing.T) {
	for _, c := range []struct {
		typ          Type
		id           uint32
		name         string
		elems, bytes int
	}{
		{Q4_0, 2, "Q4_0", 32, 18}, {Q4_1, 3, "Q4_1", 32, 20}, {Q5_0, 6, "Q5_0", 32, 22}, {Q5_1, 7, "Q5_1", 32, 24},
		{Q8_0, 8, "Q8_0", 32, 34}, {Q2_K, 10, "Q2_K", 256, 84}, {Q3_K, 11, "Q3_K", 256, 110},
		{Q4_K, 12, "Q4_K", 256, 144}, {Q5_K, 13, "Q5_K", 256, 176}, {Q6_K, 14, "Q6_K", 256, 210},
		{IQ2_XXS, 16, "IQ2_XXS", 256, 66}, {IQ4_NL, 20, "IQ4_NL", 32, 18}, {IQ4_XS, 23, "IQ4_XS", 256, 136},
		{IQ1_M, 29, "IQ1_M", 256, 56}, {TQ2_0, 35, "TQ2_0", 256, 66},
	} {
		elems, bytes := c.typ.Block()
		if uint32(c.typ) != c.id || c.typ.String() != c.name || elems != c.elems || bytes != c.bytes {
			t.Errorf("%s: id %d, name %q, blocks of %d in %d bytes; want %d, %q, %d in %d",
				c.name, uint32(c.typ), c.typ.String(), elems, bytes, c.id, c.name, c.elems, c.bytes)
		}
	}
	if s := Type(31).String(); s != "type 31" {
		t.Errorf("an unknown type is %q, want \"type 31\"", s)
	}
}

func TestGGUFReferenceFiles(t *testing.T) {
	dir := refdata.Need(t, "models")
	cases := []struct {
		file    string
		tensors int
		types   map[Type]int // tensors per type
	}{
		{"stories260K/stories260K-f32.gguf", 48, map[Type]int{F32: 48}},
		{"stories260K/stories260K-f16.gguf", 48, map[Type]int{F32: 11, F16: 37}},
		{"tiny-random-llama/gguf/model-q4_0.gguf", 20, map[Type]int{F32: 5, Q8_0: 1, Q4_0: 14}},
		{"k256-random-llama/gguf/model-q4_k_s.gguf", 20, map[Type]int{F32: 5, Q4_K: 12, Q5_K: 2, Q6_K: 1}},
		// quant-zoo/SOURCE.md's table: llama-quantize's fallback types at rows of 320
		{"quant-zoo/kmix/model-q2_k.gguf", 20, map[Type]int{IQ4_NL: 10, F32: 5, Q3_K: 2, Q5_0: 2, Q8_0: 1}},
		{"quant-zoo/kmix/model-iq4_xs.gguf", 20, map[Type]int{IQ4_NL: 10, F32: 5, IQ4_XS: 2, Q5_1: 2, Q8_0: 1}},
		{"quant-zoo/k256/model-q3_k_m.gguf", 20, map[Type]int{Q3_K: 8, F32: 5, Q4_K: 4, Q5_K: 2, Q6_K: 1}},
		{"quant-zoo/k256/model-q4_1.gguf", 20, map[Type]int{Q4_1: 14, F32: 5, Q6_K: 1}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := Open(dir + "/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := map[Type]int{}
			for _, ti := range f.Tensors {
				got[ti.Type]++
			}
			if len(f.Tensors) != c.tensors || len(got) != len(c.types) {
				t.Fatalf("got %d tensors of types %v, want %d of %v", len(f.Tensors), got, c.tensors, c.types)
			}
			for typ, n := range c.types {
				if got[typ] != n {
					t.Errorf("got %d %s tensors, want %d", got[typ], typ, n)
				}
			}
			var sum int64
			for i, tb := range f.BytesByType() {
				sum += tb.Bytes
				if i == 0 && tb.Tensors != c.types[bigType(f)] {
					t.Errorf("BytesByType()[0] is %+v, want the type holding most bytes first", tb)
				}
			}
			var want int64
			for _, ti := range f.Tensors {
				want += int64(len(ti.Data))
			}
			if sum != want {
				t.Errorf("BytesByType sums to %d, want the tensors' %d", sum, want)
			}
		})
	}
}

// bigType is the type holding the most tensor bytes, counted plainly.
func bigType(f *File) Type {
	bytes := map[Type]int{}
	best := F32
	for _, t := range f.Tensors {
		bytes[t.Type] += len(t.Data)
		if bytes[t.Type] > bytes[best] {
			best = t.Type
		}
	}
	return best
}

// FuzzGGUF feeds mutated headers and metadata to Parse. Property: no
// panic, no hang and no allocation beyond the input's size allows (the
// counts are checked against the bytes left); a file that parses has
// every tensor's bytes inside the input, its metadata keys are unique,
// and Write gives a file that parses and writes back to the same bytes.
func FuzzGGUF(f *testing.F) {
	f.Add(small())
	f.Add(head(0, 0).b)
	f.Add(head(0, 1).str("general.alignment").u32(uint32(TypeUint32)).u32(64).b)
	f.Add(head(0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1).u32(uint32(TypeString)).u64(1).str("x").b)
	f.Add(head(1, 0).str("q").u32(2).u64(32).u64(1).u32(uint32(Q8_0)).u64(0).pad(32).raw(make([]byte, 34)...).b)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.gguf", data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %q does not wrap ErrFormat", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, kv := range file.Meta {
			if seen[kv.Key] {
				t.Fatalf("key %q twice", kv.Key)
			}
			seen[kv.Key] = true
		}
		for _, ti := range file.Tensors {
			elems, bytes := ti.Type.Block()
			want := ti.Elements() / int64(elems) * int64(bytes)
			if int64(len(ti.Data)) != want || file.DataOffset+ti.Offset+uint64(len(ti.Data)) > uint64(len(data)) {
				t.Fatalf("tensor %q: %d bytes at %d, want %d inside %d", ti.Name, len(ti.Data), ti.Offset, want, len(data))
			}
		}
		var once, twice bytes.Buffer
		if err := Write(&once, file.Meta, file.Tensors, file.Alignment); err != nil {
			t.Fatalf("Write of a parsed file: %v", err)
		}
		again, err := Parse("again.gguf", once.Bytes())
		if err != nil {
			t.Fatalf("Parse of a written file: %v", err)
		}
		if err := Write(&twice, again.Meta, again.Tensors, again.Alignment); err != nil || !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("written twice: %d and %d bytes (%v), want the same bytes", once.Len(), twice.Len(), err)
		}
	})
}
