package arch

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tracer/engine/gguf"
	"tracer/engine/safetensors"
)

// ggufKV is one metadata entry a test writes: a string, uint32, float32
// or bool value.
type ggufKV struct {
	key string
	val any
}

// ggufOut is one tensor a test writes: dims innermost first.
type ggufOut struct {
	name string
	dims []uint64
	typ  gguf.Type
	data []byte
}

// writeGGUF writes a version-3 GGUF file with 32-byte alignment.
func writeGGUF(t *testing.T, path string, meta []ggufKV, tensors []ggufOut) {
	t.Helper()
	le := binary.LittleEndian
	var b []byte
	str := func(s string) { b = le.AppendUint64(b, uint64(len(s))); b = append(b, s...) }
	b = append(b, "GGUF"...)
	b = le.AppendUint32(b, 3)
	b = le.AppendUint64(b, uint64(len(tensors)))
	b = le.AppendUint64(b, uint64(len(meta)))
	for _, kv := range meta {
		str(kv.key)
		switch v := kv.val.(type) {
		case string:
			b = le.AppendUint32(b, uint32(gguf.TypeString))
			str(v)
		case uint32:
			b = le.AppendUint32(b, uint32(gguf.TypeUint32))
			b = le.AppendUint32(b, v)
		case float32:
			b = le.AppendUint32(b, uint32(gguf.TypeFloat32))
			b = le.AppendUint32(b, math.Float32bits(v))
		case bool:
			b = le.AppendUint32(b, uint32(gguf.TypeBool))
			b = append(b, map[bool]byte{false: 0, true: 1}[v])
		default:
			t.Fatalf("writeGGUF: %s: value %T", kv.key, v)
		}
	}
	var off uint64
	offs := make([]uint64, len(tensors))
	for i, tn := range tensors {
		str(tn.name)
		b = le.AppendUint32(b, uint32(len(tn.dims)))
		for _, d := range tn.dims {
			b = le.AppendUint64(b, d)
		}
		b = le.AppendUint32(b, uint32(tn.typ))
		offs[i] = off
		b = le.AppendUint64(b, off)
		off += (uint64(len(tn.data)) + 31) / 32 * 32
	}
	for len(b)%32 != 0 {
		b = append(b, 0)
	}
	for _, tn := range tensors {
		b = append(b, tn.data...)
		for len(b)%32 != 0 {
			b = append(b, 0)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hfToGGUF converts the F32 Hugging Face test model in dir (llama or
// qwen2) to GGUF as llama.cpp's convert_hf_to_gguf.py does: llama.cpp's
// names, dims innermost first, and for llama the q and k rows of each head
// moved from rotate-half order (i, i+headDim/2) to interleaved pairs (2i,
// 2i+1).
func hfToGGUF(t *testing.T, dir string, s testShape) string {
	t.Helper()
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	hd := s.hidden / s.heads
	var tensors []ggufOut
	add := func(hf, name string, permute int) {
		tn, ok := ck.Tensor(hf)
		if !ok {
			t.Fatalf("no %s", hf)
		}
		data := slices.Clone(tn.Data)
		if permute < 0 { // a Conv1D [in, out] weight, stored [out, in]
			in, out := tn.Shape[0], tn.Shape[1]
			for i := 0; i < in; i++ {
				for o := 0; o < out; o++ {
					copy(data[(o*in+i)*4:(o*in+i+1)*4], tn.Data[(i*out+o)*4:(i*out+o+1)*4])
				}
			}
			tn.Shape = []int{out, in}
		}
		if permute > 0 {
			row := tn.Shape[1] * 4
			for h := 0; h < permute; h++ {
				for i := 0; i < hd; i++ {
					src := h*hd + (i%2)*(hd/2) + i/2
					copy(data[(h*hd+i)*row:(h*hd+i+1)*row], tn.Data[src*row:(src+1)*row])
				}
			}
		}
		dims := make([]uint64, len(tn.Shape))
		for i, d := range tn.Shape {
			dims[len(dims)-1-i] = uint64(d)
		}
		tensors = append(tensors, ggufOut{name, dims, gguf.F32, data})
	}
	if s.arch == "gpt2" {
		return gpt2ToGGUF(t, s, add, &tensors)
	}
	rope := 0
	if s.arch == "llama" {
		rope = 1
	}
	add("model.embed_tokens.weight", "token_embd.weight", 0)
	for l := 0; l < s.layers; l++ {
		hf, g := fmt.Sprintf("model.layers.%d.", l), fmt.Sprintf("blk.%d.", l)
		add(hf+"input_layernorm.weight", g+"attn_norm.weight", 0)
		add(hf+"self_attn.q_proj.weight", g+"attn_q.weight", rope*s.heads)
		add(hf+"self_attn.k_proj.weight", g+"attn_k.weight", rope*s.kvHeads)
		add(hf+"self_attn.v_proj.weight", g+"attn_v.weight", 0)
		add(hf+"self_attn.o_proj.weight", g+"attn_output.weight", 0)
		if s.arch == "qwen2" {
			add(hf+"self_attn.q_proj.bias", g+"attn_q.bias", 0)
			add(hf+"self_attn.k_proj.bias", g+"attn_k.bias", 0)
			add(hf+"self_attn.v_proj.bias", g+"attn_v.bias", 0)
		}
		add(hf+"post_attention_layernorm.weight", g+"ffn_norm.weight", 0)
		add(hf+"mlp.gate_proj.weight", g+"ffn_gate.weight", 0)
		add(hf+"mlp.up_proj.weight", g+"ffn_up.weight", 0)
		add(hf+"mlp.down_proj.weight", g+"ffn_down.weight", 0)
	}
	add("model.norm.weight", "output_norm.weight", 0)
	if !s.tied {
		add("lm_head.weight", "output.weight", 0)
	}
	a := s.arch
	meta := []ggufKV{
		{"general.architecture", a}, {a + ".context_length", uint32(s.maxPos)}, {a + ".embedding_length", uint32(s.hidden)},
		{a + ".block_count", uint32(s.layers)}, {a + ".feed_forward_length", uint32(s.ffn)},
		{a + ".attention.head_count", uint32(s.heads)}, {a + ".attention.head_count_kv", uint32(s.kvHeads)},
		{a + ".rope.freq_base", float32(100000)}, {a + ".attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.bos_token_id", uint32(1)}, {"tokenizer.ggml.eos_token_id", uint32(2)},
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	writeGGUF(t, path, meta, tensors)
	return path
}

// gpt2ToGGUF converts GPT-2 as llama.cpp does: Conv1D weights transposed
// to [out, in].
func gpt2ToGGUF(t *testing.T, s testShape, add func(hf, name string, permute int), tensors *[]ggufOut) string {
	add("transformer.wte.weight", "token_embd.weight", 0)
	add("transformer.wpe.weight", "position_embd.weight", 0)
	for l := 0; l < s.layers; l++ {
		hf, g := fmt.Sprintf("transformer.h.%d.", l), fmt.Sprintf("blk.%d.", l)
		add(hf+"ln_1.weight", g+"attn_norm.weight", 0)
		add(hf+"ln_1.bias", g+"attn_norm.bias", 0)
		add(hf+"attn.c_attn.weight", g+"attn_qkv.weight", -1)
		add(hf+"attn.c_attn.bias", g+"attn_qkv.bias", 0)
		add(hf+"attn.c_proj.weight", g+"attn_output.weight", -1)
		add(hf+"attn.c_proj.bias", g+"attn_output.bias", 0)
		add(hf+"ln_2.weight", g+"ffn_norm.weight", 0)
		add(hf+"ln_2.bias", g+"ffn_norm.bias", 0)
		add(hf+"mlp.c_fc.weight", g+"ffn_up.weight", -1)
		add(hf+"mlp.c_fc.bias", g+"ffn_up.bias", 0)
		add(hf+"mlp.c_proj.weight", g+"ffn_down.weight", -1)
		add(hf+"mlp.c_proj.bias", g+"ffn_down.bias", 0)
	}
	add("transformer.ln_f.weight", "output_norm.weight", 0)
	add("transformer.ln_f.bias", "output_norm.bias", 0)
	meta := []ggufKV{
		{"general.architecture", "gpt2"}, {"gpt2.context_length", uint32(s.maxPos)}, {"gpt2.embedding_length", uint32(s.hidden)},
		{"gpt2.block_count", uint32(s.layers)}, {"gpt2.feed_forward_length", uint32(s.ffn)},
		{"gpt2.attention.head_count", uint32(s.heads)}, {"gpt2.attention.layer_norm_epsilon", float32(1e-5)},
		{"tokenizer.ggml.bos_token_id", uint32(s.vocab - 1)}, {"tokenizer.ggml.eos_token_id", uint32(s.vocab - 1)},
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	writeGGUF(t, path, meta, *tensors)
	return path
}

// TestGGUFMatchesHF: llama, qwen2 and gpt2 models converted to GGUF as
// llama.cpp does give the Hugging Face form's logits within 1e-5 (llama
// through interleaved rotary pairs, qwen2 through rotate-half and biases,
// gpt2 through [out, in] weights).
func TestGGUFMatchesHF(t *testing.T) {
	for _, a := range []string{"llama", "qwen2", "gpt2"} {
		t.Run(a, func(t *testing.T) {
			s := tinyShape(a)
			dir := t.TempDir()
			writeTestModel(t, dir, s, 3)
			hf, err := OpenHF(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer hf.(*Model).Close()
			g, err := OpenGGUF(hfToGGUF(t, dir, s))
			if err != nil {
				t.Fatal(err)
			}
			defer g.(*Model).Close()
			ids := []int{1, 5, 9, 14, 3, 30, 7}
			got, want := stepLogits(t, g.(*Model), ids[:3], ids[3:]), stepLogits(t, hf.(*Model), ids[:3], ids[3:])
			for i := range got {
				if d := maxDiff(got[i], want[i]); d > 1e-5 {
					t.Errorf("step %d: logits differ by %g, want ≤ 1e-5", i, d)
				}
			}
			bos, eos := 1, 2
			if a == "gpt2" {
				bos, eos = s.vocab-1, s.vocab-1
			}
			if info := g.Info(); info.Architecture != a || info.Kind != "gguf" || info.BOS != bos || !slices.Equal(info.EOS, []int{eos}) {
				t.Errorf("got %+v, want architecture %s, kind gguf, BOS %d, EOS [%d]", info, a, bos, eos)
			}
		})
	}
}

// TestGGUFBadModels: files the reader accepts but tracer cannot run give
// an error naming the file and what is wrong.
func TestGGUFBadModels(t *testing.T) {
	s := tinyShape("llama")
	s.hidden, s.ffn = 32, 64 // rows of whole Q8_1 blocks
	dir := t.TempDir()
	writeTestModel(t, dir, s, 3)
	good := hfToGGUF(t, dir, s)
	f, err := gguf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	meta := func(key string, val any) []ggufKV {
		var out []ggufKV
		for _, kv := range f.Meta {
			if kv.Key != key {
				out = append(out, ggufKV{kv.Key, kv.Value})
			}
		}
		if val != nil {
			out = append(out, ggufKV{key, val})
		}
		return out
	}
	tensors := func(change func(t *ggufOut) bool) []ggufOut {
		var out []ggufOut
		for _, ti := range f.Tensors {
			o := ggufOut{ti.Name, ti.Dims, ti.Type, ti.Data}
			if change == nil || change(&o) {
				out = append(out, o)
			}
		}
		return out
	}
	q81 := func(o *ggufOut) bool { // Q8_1: ggml's activation type, never a weight's
		if o.name == "blk.1.ffn_up.weight" {
			o.typ, o.data = gguf.Q8_1, make([]byte, int(o.dims[0]/32*36*o.dims[1]))
		}
		return true
	}
	cases := []struct {
		name    string
		meta    []ggufKV
		tensors []ggufOut
		want    string
	}{
		{"unknown architecture", meta("general.architecture", "mamba"), tensors(nil), `general.architecture "mamba" not supported`},
		{"gpt2 with llama's keys", meta("general.architecture", "gpt2"), tensors(nil), `metadata "gpt2.embedding_length" is missing`},
		{"no block count", meta("llama.block_count", nil), tensors(nil), `metadata "llama.block_count" is missing`},
		{"zero heads", meta("llama.attention.head_count", uint32(0)), tensors(nil), "must be positive"},
		{"2^31 layers", meta("llama.block_count", uint32(1<<31)), tensors(nil), "over tracer's limit"},
		{"missing tensor", meta("", nil), tensors(func(o *ggufOut) bool { return o.name != "blk.1.attn_k.weight" }), `tensor "blk.1.attn_k.weight" is missing`},
		{"unsupported type", meta("", nil), tensors(q81), `tensor "blk.1.ffn_up.weight" has type Q8_1, which tracer cannot compute with`},
		{"wrong dims", meta("llama.feed_forward_length", uint32(32)), tensors(nil), `tensor "blk.0.ffn_gate.weight" has dims [32 64], the metadata says [32 32]`},
		{"partial rotary", meta("llama.rope.dimension_count", uint32(2)), tensors(nil), "partial rotary embeddings are not supported"},
		{"Llama 3.1 rope factors", meta("", nil), append(tensors(nil), ggufOut{"rope_freqs.weight", []uint64{4}, gguf.F32, make([]byte, 16)}),
			`tensor "rope_freqs.weight" is not part of the llama layout`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.gguf")
			writeGGUF(t, path, c.meta, c.tensors)
			m, err := OpenGGUF(path)
			if err == nil {
				m.(*Model).Close()
				t.Fatalf("got no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Errorf("got %q, want an error naming bad.gguf and containing %q", err, c.want)
			}
		})
	}
}
