package arch

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"tracer/engine"
	"tracer/engine/refdata"
	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

// refNet is a float64 forward pass of a transformers checkpoint (GPT-2,
// Llama, Qwen2), written for the tests from the architectures' papers and
// transformers' definitions: every weight upcast from the file, every sum
// in float64, nothing cached (each call runs the whole sequence).
type refNet struct {
	arch                                                string // "gpt2", "llama" or "qwen2"
	vocab, hidden, layers, heads, kvHeads, headDim, ffn int
	eps, theta                                          float64
	w                                                   map[string][]float64
	pre                                                 string // GPT-2's tensor prefix
	head                                                string // the output head's tensor
}

// refLayer is what one layer did at one position.
type refLayer struct {
	in, attn, mid, mlp, out []float64   // the stream entering, attention's output (bias included), h+attn, the MLP's output, h+attn+mlp
	heads                   [][]float64 // [head]: W_o[:, cols of h] · head h's output
	act                     []float64   // the down projection's input
}

// refPos is what the reference computed at one position.
type refPos struct {
	h0     []float64
	layers []refLayer
	final  []float64 // final_norm(h_L)
}

// loadRefNet reads config.json and model.safetensors of dir.
func loadRefNet(t *testing.T, dir string) *refNet {
	t.Helper()
	var c map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	num := func(key string, def float64) float64 {
		if v, ok := c[key].(float64); ok {
			return v
		}
		return def
	}
	n := &refNet{arch: c["model_type"].(string), vocab: int(num("vocab_size", 0)), w: map[string][]float64{}}
	if n.arch == "gpt2" {
		n.hidden, n.layers, n.heads = int(num("n_embd", 0)), int(num("n_layer", 0)), int(num("n_head", 0))
		n.kvHeads, n.ffn, n.eps, n.pre = n.heads, int(num("n_inner", float64(4*n.hidden))), num("layer_norm_epsilon", 1e-5), "transformer."
	} else {
		n.hidden, n.layers, n.heads = int(num("hidden_size", 0)), int(num("num_hidden_layers", 0)), int(num("num_attention_heads", 0))
		n.kvHeads, n.ffn = int(num("num_key_value_heads", float64(n.heads))), int(num("intermediate_size", 0))
		n.eps, n.theta = num("rms_norm_eps", 1e-6), num("rope_theta", 10000)
	}
	n.headDim = n.hidden / n.heads
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for _, name := range ck.Names() {
		tn, _ := ck.Tensor(name)
		var dt tensor.DType
		switch tn.DType {
		case safetensors.F32:
			dt = tensor.F32
		case safetensors.BF16:
			dt = tensor.BF16
		case safetensors.F16:
			dt = tensor.F16
		default:
			continue
		}
		f := make([]float32, len(tn.Data)/dt.Size())
		tensor.Decode(f, tn.Data, dt)
		v := make([]float64, len(f))
		for i, x := range f {
			v[i] = float64(x)
		}
		n.w[name] = v
	}
	tied, ok := c["tie_word_embeddings"].(bool)
	switch {
	case n.arch == "gpt2" && (!ok || tied):
		n.head = n.pre + "wte.weight"
	case n.arch != "gpt2" && (!ok || tied):
		n.head = "model.embed_tokens.weight"
	default:
		n.head = "lm_head.weight"
	}
	return n
}

// get returns the tensor called name, failing the test when it is absent.
func (n *refNet) get(t *testing.T, name string) []float64 {
	t.Helper()
	v, ok := n.w[name]
	if !ok {
		t.Fatalf("reference: no tensor %q", name)
	}
	return v
}

// linear is W x (+ b) for a [out, in] weight.
func linear64(w, b, x []float64, out int) []float64 {
	in := len(x)
	y := make([]float64, out)
	for o := range out {
		var s float64
		for i, v := range x {
			s += w[o*in+i] * v
		}
		if b != nil {
			s += b[o]
		}
		y[o] = s
	}
	return y
}

// conv1D is x W + b for GPT-2's [in, out] weight.
func conv1D64(w, b, x []float64, out int) []float64 {
	y := make([]float64, out)
	for i, v := range x {
		for o := range out {
			y[o] += v * w[i*out+o]
		}
	}
	for o := range y {
		y[o] += b[o]
	}
	return y
}

func layerNorm64(x, w, b []float64, eps float64) []float64 {
	var mean, v float64
	for _, a := range x {
		mean += a
	}
	mean /= float64(len(x))
	for _, a := range x {
		v += (a - mean) * (a - mean)
	}
	inv := 1 / math.Sqrt(v/float64(len(x))+eps)
	y := make([]float64, len(x))
	for i, a := range x {
		y[i] = (a-mean)*inv*w[i] + b[i]
	}
	return y
}

func rmsNorm64(x, w []float64, eps float64) []float64 {
	var ss float64
	for _, a := range x {
		ss += a * a
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
	y := make([]float64, len(x))
	for i, a := range x {
		y[i] = a * inv * w[i]
	}
	return y
}

func add64(a, b []float64) []float64 {
	y := make([]float64, len(a))
	for i := range a {
		y[i] = a[i] + b[i]
	}
	return y
}

func norm64(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// finalNorm is the model's norm before the head.
func (n *refNet) finalNorm(t *testing.T, h []float64) []float64 {
	if n.arch == "gpt2" {
		return layerNorm64(h, n.get(t, n.pre+"ln_f.weight"), n.get(t, n.pre+"ln_f.bias"), n.eps)
	}
	return rmsNorm64(h, n.get(t, "model.norm.weight"), n.eps)
}

// logits is the head times x (hidden).
func (n *refNet) logits(t *testing.T, x []float64) []float64 {
	return linear64(n.get(t, n.head), nil, x, n.vocab)
}

// rope rotates each head of x (heads·headDim) at position pos, halves
// (i, i+headDim/2) as transformers' rotate_half.
func (n *refNet) rope(x []float64, pos int) {
	hd, half := n.headDim, n.headDim/2
	for h := 0; h < len(x)/hd; h++ {
		v := x[h*hd : (h+1)*hd]
		for i := range half {
			a := float64(pos) / math.Pow(n.theta, float64(2*i)/float64(hd))
			c, s := math.Cos(a), math.Sin(a)
			x0, x1 := v[i], v[i+half]
			v[i], v[i+half] = x0*c-x1*s, x1*c+x0*s
		}
	}
}

// run computes every position of ids, from position 0.
func (n *refNet) run(t *testing.T, ids []int) []refPos {
	t.Helper()
	P, h, hd := len(ids), n.hidden, n.headDim
	qd, kvd, rep := n.heads*hd, n.kvHeads*hd, n.heads/n.kvHeads
	out := make([]refPos, P)
	x := make([][]float64, P)
	for p, id := range ids {
		if n.arch == "gpt2" {
			x[p] = add64(n.get(t, n.pre+"wte.weight")[id*h:(id+1)*h], n.get(t, n.pre+"wpe.weight")[p*h:(p+1)*h])
		} else {
			x[p] = slices.Clone(n.get(t, "model.embed_tokens.weight")[id*h : (id+1)*h])
		}
		out[p].h0 = x[p]
	}
	for l := range n.layers {
		q, k, v := make([][]float64, P), make([][]float64, P), make([][]float64, P)
		var wo, bo []float64 // o_proj [out, in], or GPT-2's c_proj [in, out]
		for p := range P {
			if n.arch == "gpt2" {
				pre := fmt.Sprintf("%sh.%d.", n.pre, l)
				a := layerNorm64(x[p], n.get(t, pre+"ln_1.weight"), n.get(t, pre+"ln_1.bias"), n.eps)
				qkv := conv1D64(n.get(t, pre+"attn.c_attn.weight"), n.get(t, pre+"attn.c_attn.bias"), a, 3*h)
				q[p], k[p], v[p] = qkv[:h], qkv[h:2*h], qkv[2*h:]
				wo, bo = n.get(t, pre+"attn.c_proj.weight"), n.get(t, pre+"attn.c_proj.bias")
				continue
			}
			pre := fmt.Sprintf("model.layers.%d.", l)
			a := rmsNorm64(x[p], n.get(t, pre+"input_layernorm.weight"), n.eps)
			bias := func(name string) []float64 { return n.w[pre+"self_attn."+name+".bias"] }
			q[p] = linear64(n.get(t, pre+"self_attn.q_proj.weight"), bias("q_proj"), a, qd)
			k[p] = linear64(n.get(t, pre+"self_attn.k_proj.weight"), bias("k_proj"), a, kvd)
			v[p] = linear64(n.get(t, pre+"self_attn.v_proj.weight"), bias("v_proj"), a, kvd)
			n.rope(q[p], p)
			n.rope(k[p], p)
			wo, bo = n.get(t, pre+"self_attn.o_proj.weight"), n.w[pre+"self_attn.o_proj.bias"]
		}
		for p := range P {
			L := refLayer{in: x[p], heads: make([][]float64, n.heads), attn: make([]float64, h)}
			for hh := range n.heads {
				g := hh / rep
				w := make([]float64, p+1)
				best := math.Inf(-1)
				for j := range w {
					var s float64
					for i := range hd {
						s += q[p][hh*hd+i] * k[j][g*hd+i]
					}
					w[j] = s / math.Sqrt(float64(hd))
					best = max(best, w[j])
				}
				var sum float64
				for j := range w {
					w[j] = math.Exp(w[j] - best)
					sum += w[j]
				}
				o := make([]float64, hd)
				for j := range w {
					for i := range hd {
						o[i] += w[j] / sum * v[j][g*hd+i]
					}
				}
				share := make([]float64, h)
				for r := range h {
					var s float64
					for i := range hd {
						c := hh*hd + i // input column of the projection
						if n.arch == "gpt2" {
							s += wo[c*h+r] * o[i]
						} else {
							s += wo[r*qd+c] * o[i]
						}
					}
					share[r] = s
				}
				L.heads[hh] = share
				L.attn = add64(L.attn, share)
			}
			if bo != nil {
				L.attn = add64(L.attn, bo)
			}
			L.mid = add64(x[p], L.attn)
			if n.arch == "gpt2" {
				pre := fmt.Sprintf("%sh.%d.", n.pre, l)
				m := layerNorm64(L.mid, n.get(t, pre+"ln_2.weight"), n.get(t, pre+"ln_2.bias"), n.eps)
				fc := conv1D64(n.get(t, pre+"mlp.c_fc.weight"), n.get(t, pre+"mlp.c_fc.bias"), m, n.ffn)
				for i, a := range fc {
					fc[i] = 0.5 * a * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(a+0.044715*a*a*a)))
				}
				L.act = fc
				L.mlp = conv1D64(n.get(t, pre+"mlp.c_proj.weight"), n.get(t, pre+"mlp.c_proj.bias"), fc, h)
			} else {
				pre := fmt.Sprintf("model.layers.%d.", l)
				m := rmsNorm64(L.mid, n.get(t, pre+"post_attention_layernorm.weight"), n.eps)
				gate := linear64(n.get(t, pre+"mlp.gate_proj.weight"), nil, m, n.ffn)
				up := linear64(n.get(t, pre+"mlp.up_proj.weight"), nil, m, n.ffn)
				for i, g := range gate {
					gate[i] = g / (1 + math.Exp(-g)) * up[i]
				}
				L.act = gate
				L.mlp = linear64(n.get(t, pre+"mlp.down_proj.weight"), nil, gate, h)
			}
			L.out = add64(L.mid, L.mlp)
			out[p].layers = append(out[p].layers, L)
		}
		for p := range P {
			x[p] = out[p].layers[l].out
		}
	}
	for p := range P {
		out[p].final = n.finalNorm(t, x[p])
	}
	return out
}

// insideGolden is the part of an inside.json (golden/INSIDE.md) the
// forward test reads.
type insideGolden struct {
	Prompt  []int `json:"prompt"`
	Prefill struct {
		Lens struct {
			TopIDs    [][][]int     `json:"top_ids"`    // [layer][position][10]
			TopLogits [][][]float64 `json:"top_logits"` // [layer][position][10]
		} `json:"lens"`
	} `json:"prefill"`
	Decode struct {
		Steps []struct {
			Position int `json:"position"`
			InputID  int `json:"input_id"`
			Token    int `json:"token"`
			Lens     struct {
				TopIDs    [][]int     `json:"top_ids"`    // [layer][10]
				TopLogits [][]float64 `json:"top_logits"` // [layer][10]
			} `json:"lens"`
		} `json:"steps"`
	} `json:"decode"`
}

// mustRefData is refdata.Path that fails the test, never skips, when the
// reference data is missing.
func mustRefData(t *testing.T, rel string) string {
	t.Helper()
	p, err := refdata.Path(rel)
	if err != nil {
		t.Fatalf("%v: the forward pass is checked against it", err)
	}
	return p
}

// checkRefNet validates the reference before it judges the engine: its
// logits at every prompt position against golden.json's prefill (the top
// 50 and the log-sum-exp), and every layer's logit lens against
// inside.json's top-10 logits (prefill, every position; each decode
// step), all within 1e-4 of transformers. It returns the largest
// difference seen.
func checkRefNet(t *testing.T, n *refNet, g *golden, ref *insideGolden, seq []int, steps [][]refPos) float64 {
	t.Helper()
	var worst float64
	see := func(what string, got, want float64) {
		d := math.Abs(got - want)
		worst = max(worst, d)
		if !(d <= 1e-4) {
			t.Errorf("reference %s: %v, transformers %v", what, got, want)
		}
	}
	if !slices.Equal(g.Prefill.InputIDs, ref.Prompt) {
		t.Fatalf("golden.json prefill ids %v, inside.json prompt %v", g.Prefill.InputIDs, ref.Prompt)
	}
	prefill := steps[0]
	for p, rec := range g.Prefill.Logits {
		logits := n.logits(t, prefill[p].final)
		for k, id := range rec.TopIDs {
			see(fmt.Sprintf("prefill logit of id %d at position %d", id, p), logits[id], float64(rec.TopLogits[k]))
		}
		best := slices.Max(logits)
		var sum float64
		for _, v := range logits {
			sum += math.Exp(v - best)
		}
		see(fmt.Sprintf("prefill logsumexp at position %d", p), best+math.Log(sum), rec.Logsumexp)
	}
	lens := func(what string, pos refPos, l int, ids []int, logits []float64) {
		got := n.logits(t, n.finalNorm(t, pos.layers[l].out))
		for k, id := range ids {
			see(fmt.Sprintf("%s layer %d lens logit of id %d", what, l, id), got[id], logits[k])
		}
	}
	for l := range n.layers {
		for p := range ref.Prompt {
			lens(fmt.Sprintf("prefill position %d", p), prefill[p], l, ref.Prefill.Lens.TopIDs[l][p], ref.Prefill.Lens.TopLogits[l][p])
		}
		for s, st := range ref.Decode.Steps {
			lens(fmt.Sprintf("decode step %d", s), steps[s][st.Position], l, st.Lens.TopIDs[l], st.Lens.TopLogits[l])
		}
	}
	for s, st := range ref.Decode.Steps {
		if seq[st.Position] != st.InputID {
			t.Fatalf("decode step %d: position %d holds %d, inside.json feeds %d", s, st.Position, seq[st.Position], st.InputID)
		}
	}
	return worst
}

// forwardDiff tracks the largest difference between the engine's record
// and the reference, per kind of quantity ("norms", "heads", "neurons"):
// absolute, and relative to the reference where it is above 1.
type forwardDiff struct {
	abs   map[string]float64
	rel   float64
	where string
}

func (w *forwardDiff) String() string {
	return fmt.Sprintf("max abs: norms %.3g, heads %.3g, neurons %.3g; max rel %.3g (%s)", w.abs["norms"], w.abs["heads"], w.abs["neurons"], w.rel, w.where)
}

// TestForwardGolden checks the recorded forward pass of every golden
// model against a float64 forward pass of the same weights (refNet),
// first validated against transformers (checkRefNet): at the prefill's
// last position and at each of inside.json's decode steps (greedy, fed
// its tokens through the KV cache), the embedding's, every layer's and
// the final norm, every head's share and the 64 most active neurons'
// indices and activations agree within 1e-4, relative 1e-4 above 1 (the
// engine sums in float32, whose rounding of a vector of norm 20 is about
// 1e-6 of it: an absolute bound would test the size of the stream, not
// the engine). Each step's bytes add up to the step's traffic.
func TestForwardGolden(t *testing.T) {
	for _, name := range goldenModels {
		t.Run(name, func(t *testing.T) {
			dir := mustRefData(t, "golden/"+name)
			g := readGolden(t, dir)
			var ref insideGolden
			readJSON(t, filepath.Join(dir, "inside.json"), &ref)
			n := loadRefNet(t, dir)

			seq := slices.Clone(ref.Prompt)
			for _, st := range ref.Decode.Steps[1:] {
				seq = append(seq, st.InputID)
			}
			P := len(ref.Prompt)
			steps := make([][]refPos, len(ref.Decode.Steps))
			for s := range steps {
				steps[s] = n.run(t, seq[:P+s])
			}
			refWorst := checkRefNet(t, n, g, &ref, seq, steps)

			em, err := OpenHF(dir)
			if err != nil {
				t.Fatal(err)
			}
			m := em.(*Model)
			defer m.Close()
			const K = 64
			c, err := m.NewCache(1, len(seq))
			if err != nil {
				t.Fatal(err)
			}
			logits := [][]float32{make([]float32, m.d.vocab)}
			w := forwardDiff{abs: map[string]float64{}}
			for s, st := range ref.Decode.Steps {
				b := prompt(seq[:P])
				if s > 0 {
					mask := make([]bool, P+s)
					for i := range mask {
						mask[i] = true
					}
					b = &engine.Batch{Tokens: [][]int{{st.InputID}}, Positions: [][]int{{st.Position}}, Mask: [][]bool{mask}}
				}
				past := c.Len()
				in := &engine.Inside{Forward: K}
				if err := m.ForwardInside(c, b, logits, in); err != nil {
					t.Fatal(err)
				}
				if got := tensor.Argmax(logits[0]); got != st.Token {
					t.Fatalf("step %d chose %d, transformers %d", s, got, st.Token)
				}
				compareForward(t, fmt.Sprintf("step %d", s), in, steps[s][st.Position], &w)
				checkForwardBytes(t, m, in, past, len(b.Tokens[0]))
			}
			t.Logf("%s: reference vs transformers ≤ %.3g; engine vs reference: %v", name, refWorst, &w)
		})
	}
}

// compareForward compares row 0 of in's forward answers with the
// reference at the same position.
func compareForward(t *testing.T, at string, in *engine.Inside, ref refPos, w *forwardDiff) {
	t.Helper()
	L, H, K := in.Layers, in.Heads, in.Neurons
	if len(ref.layers) != L || len(in.Norms) != engine.ForwardNorms(L) {
		t.Fatalf("%s: %d layers and %d norms, want %d and %d", at, L, len(in.Norms), len(ref.layers), engine.ForwardNorms(len(ref.layers)))
	}
	kind := "norms"
	see := func(what string, got, want float64) {
		d := math.Abs(got - want)
		rel := d / max(1, math.Abs(want))
		w.abs[kind] = max(w.abs[kind], d)
		if rel > w.rel {
			w.rel, w.where = rel, at+" "+what
		}
		if !(rel <= 1e-4) {
			t.Errorf("%s %s: engine %v, reference %v", at, what, got, want)
		}
	}
	see("embedding", in.Norms[0], norm64(ref.h0))
	see("final", in.Norms[1+5*L], norm64(ref.final))
	for l, rl := range ref.layers {
		kind = "norms"
		ns := in.Norms[1+5*l:]
		for i, v := range [][]float64{rl.in, rl.attn, rl.mid, rl.mlp, rl.out} {
			see(fmt.Sprintf("layer %d %s", l, []string{"in", "attn", "mid", "mlp", "out"}[i]), ns[i], norm64(v))
		}
		kind = "heads"
		for h := range H {
			see(fmt.Sprintf("layer %d head %d", l, h), in.HeadNorms[l*H+h], norm64(rl.heads[h]))
		}
		// The reference's ranking by |act|, ties by lower index.
		order := make([]int, len(rl.act))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return math.Abs(rl.act[order[a]]) > math.Abs(rl.act[order[b]]) })
		kind = "neurons"
		ids, acts := in.NeuronIDs[l*K:(l+1)*K], in.NeuronActs[l*K:(l+1)*K]
		for k := range K {
			what := fmt.Sprintf("layer %d neuron rank %d", l, k)
			see(what+" activation", float64(acts[k]), rl.act[ids[k]])
			see(what+" |activation|", math.Abs(float64(acts[k])), math.Abs(rl.act[order[k]]))
			// Another index only where the reference ties within 1e-5.
			if ids[k] != order[k] && math.Abs(math.Abs(rl.act[ids[k]])-math.Abs(rl.act[order[k]])) > 1e-5 {
				t.Errorf("%s: engine neuron %d (%v), reference %d (%v)", what, ids[k], acts[k], order[k], rl.act[order[k]])
			}
		}
	}
}

// checkForwardBytes checks that the bytes of in's forward answers add up
// to the traffic of the step that fed n tokens after past positions, for
// one row: weights and the cached keys and values read.
func checkForwardBytes(t *testing.T, m *Model, in *engine.Inside, past, n int) {
	t.Helper()
	sum := in.EmbedBytes + in.UnembedBytes
	for l := range in.Layers {
		sum += in.AttnBytes[l] + in.MLPBytes[l]
	}
	c := m.Cost(1, past, n)
	if want := c.WeightBytes + c.KVReadBytes; sum != want || in.EmbedBytes <= 0 || in.UnembedBytes <= 0 {
		t.Errorf("past %d, %d fed: the forward pass's bytes add up to %d (embedding %d, head %d), want the traffic's weights and KV reads %d",
			past, n, sum, in.EmbedBytes, in.UnembedBytes, want)
	}
}
