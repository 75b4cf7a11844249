package arch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"tracer/engine"
	"tracer/engine/tensor"
)

// forwardModels are the models the forward-pass tests run: batchShapes'
// (every architecture and weight type, quantized GGUF matrices included),
// a GPT-2 GGUF (its output projection stored [out, in]) and a llama2.c
// checkpoint.
func forwardModels(t *testing.T) []struct {
	name  string
	build func() (*Model, error)
} {
	models := batchShapes()
	add := func(name string, build func() (*Model, error)) {
		models = append(models, struct {
			name  string
			build func() (*Model, error)
		}{name, build})
	}
	add("gguf-gpt2", func() (*Model, error) {
		s := tinyShape("gpt2")
		dir := t.TempDir()
		writeTestModel(t, dir, s, 3)
		m, err := OpenGGUF(hfToGGUF(t, dir, s))
		if err != nil {
			return nil, err
		}
		return m.(*Model), nil
	})
	add("llama2c", func() (*Model, error) { return newLlama2c("tiny.bin", llama2cFile(16, 24, 2, 4, 2, -32, 8), 0) })
	return models
}

// stepBatch is a decode step of one token per row at slot past, every
// slot of row 0 real and row 1's first pad slots masked (leftPadded's
// layout).
func stepBatch(rows, past, pad int, tok int) *engine.Batch {
	b := &engine.Batch{}
	for r := range rows {
		mask := make([]bool, past+1)
		for i := range mask {
			mask[i] = r == 0 || i >= pad
		}
		pos := past
		if r == 1 {
			pos = past - pad
		}
		b.Tokens, b.Positions, b.Mask = append(b.Tokens, []int{tok + r}), append(b.Positions, []int{pos}), append(b.Mask, mask)
	}
	return b
}

// TestForwardRecord runs a left-padded prefill and two decode steps of two
// rows on every kind of model, asking for the forward pass: the logits are
// Forward's, bit for bit; the stream's norms are those of ForwardAll's
// hidden states at each row's last token; layer l+1 enters as layer l
// leaves; norms obey the triangle inequality of h + attn and h + attn +
// mlp; the heads' shares are positive; the neurons are the most active,
// each once, by descending |activation|; the bytes add up to the step's
// traffic; and a decode step allocates nothing.
func TestForwardRecord(t *testing.T) {
	const n, pad, K = 6, 2, 5
	for _, mc := range forwardModels(t) {
		t.Run(mc.name, func(t *testing.T) {
			m, err := mc.build()
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			d := m.d
			b := leftPadded(n, pad)
			for r := range b.Tokens {
				for i := range b.Tokens[r] {
					b.Tokens[r][i] %= d.vocab
				}
			}
			c, _ := m.NewCache(2, 16)
			plain, _ := m.NewCache(2, 16)
			all, _ := m.NewCache(2, 16)
			in := &engine.Inside{Forward: K}
			got := [][]float32{make([]float32, d.vocab), make([]float32, d.vocab)}
			want := [][]float32{make([]float32, d.vocab), make([]float32, d.vocab)}
			for step := range 3 {
				sb := b
				if step > 0 {
					sb = stepBatch(2, n+step-1, pad, 3+step)
				}
				past := c.Len()
				if err := m.ForwardInside(c, sb, got, in); err != nil {
					t.Fatal(err)
				}
				if err := m.Forward(plain, sb, want); err != nil {
					t.Fatal(err)
				}
				o, err := m.ForwardAll(all, sb)
				if err != nil {
					t.Fatal(err)
				}
				for r := range 2 {
					if !slices.Equal(got[r], want[r]) {
						t.Fatalf("step %d row %d: ForwardInside's logits differ from Forward's", step, r)
					}
					last := len(sb.Tokens[0]) - 1
					checkForwardRow(t, in, r, d, K, func(l int) []float32 { // the stream after layer l (-1: embedding)
						if l == d.layers-1 {
							return o.PreNorm[r][last]
						}
						return o.Hidden[l+1][r][last]
					}, o.Hidden[d.layers][r][last])
				}
				checkForwardBytes(t, m, in, past, len(sb.Tokens[0]))
			}
			past := c.Len()
			sb := stepBatch(2, past, pad, 4)
			allocs := testing.AllocsPerRun(5, func() {
				c.Truncate(past)
				if err := m.ForwardInside(c, sb, got, in); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("a decode step recording the forward pass allocates %v times, want 0", allocs)
			}
		})
	}
}

// checkForwardRow checks row r of in's forward answers: the stream's
// norms against hidden(l), the stream after layer l (-1: the embedding),
// and final, the final norm's output; the other checks of
// TestForwardRecord.
func checkForwardRow(t *testing.T, in *engine.Inside, r int, d dims, K int, hidden func(l int) []float32, final []float32) {
	t.Helper()
	L, H := d.layers, d.heads
	if in.Layers != L || in.Heads != H || in.Neurons != min(K, d.ffn) {
		t.Fatalf("answers for %d layers, %d heads, %d neurons; want %d, %d, %d", in.Layers, in.Heads, in.Neurons, L, H, min(K, d.ffn))
	}
	ns := in.Norms[r*engine.ForwardNorms(L) : (r+1)*engine.ForwardNorms(L)]
	same := func(what string, got float64, x []float32) {
		t.Helper()
		if want := norm(x); got != want {
			t.Errorf("row %d %s: norm %v, want %v (ForwardAll's)", r, what, got, want)
		}
	}
	same("embedding", ns[0], hidden(-1))
	same("final", ns[len(ns)-1], final)
	for l := range L {
		in5 := ns[1+5*l : 6+5*l]
		same("layer in", in5[normIn], hidden(l-1))
		same("layer out", in5[normOut], hidden(l))
		slack := 1 + 1e-6
		if in5[normMid] > (in5[normIn]+in5[normAttn])*slack || in5[normOut] > (in5[normMid]+in5[normMLP])*slack || in5[normAttn] == 0 || in5[normMLP] == 0 {
			t.Errorf("row %d layer %d: norms in %v attn %v mid %v mlp %v out %v break the triangle inequality or are 0",
				r, l, in5[normIn], in5[normAttn], in5[normMid], in5[normMLP], in5[normOut])
		}
		heads := in.HeadNorms[(r*L+l)*H : (r*L+l+1)*H]
		for h, v := range heads {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("row %d layer %d head %d: share %v, want a positive number", r, l, h, v)
			}
		}
		k := in.Neurons
		ids, acts := in.NeuronIDs[(r*L+l)*k:(r*L+l+1)*k], in.NeuronActs[(r*L+l)*k:(r*L+l+1)*k]
		for j, id := range ids {
			if id < 0 || id >= d.ffn || slices.Contains(ids[:j], id) {
				t.Fatalf("row %d layer %d: neuron ids %v, want distinct ids below %d", r, l, ids, d.ffn)
			}
			if j > 0 && math.Abs(float64(acts[j])) > math.Abs(float64(acts[j-1])) {
				t.Errorf("row %d layer %d: activations %v are not by descending |act|", r, l, acts)
			}
		}
	}
}

// TestTopAbs: the most active entries by descending |v|, ties by lower
// index, a NaN below every number; exactly k of them.
func TestTopAbs(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		v    []float32
		k    int
		want []int
	}{
		{[]float32{1, -3, 2, 3, -0.5}, 3, []int{1, 3, 2}},
		{[]float32{1, -3, 2, 3, -0.5}, 5, []int{1, 3, 2, 0, 4}},
		{[]float32{0, 0, 0}, 2, []int{0, 1}},
		{[]float32{nan, 1, nan, -2}, 3, []int{3, 1, 0}},
		{[]float32{5}, 1, []int{0}},
		{[]float32{nan, float32(math.Copysign(0, -1)), 0, float32(math.Inf(-1)), nan}, 4, []int{3, 1, 2, 0}},
		{[]float32{nan, nan}, 1, []int{0}},
		{[]float32{-1, 2, -2, 1}, 2, []int{1, 2}},
	} {
		ids, acts := make([]int, tc.k), make([]float32, tc.k)
		topAbs(ids, acts, tc.v)
		if !slices.Equal(ids, tc.want) {
			t.Errorf("topAbs(%v, %d) = %v, want %v", tc.v, tc.k, ids, tc.want)
		}
		for j, id := range ids {
			if a, b := acts[j], tc.v[id]; a != b && !(a != a && b != b) {
				t.Errorf("topAbs(%v, %d): act %d is %v, want %v", tc.v, tc.k, j, a, b)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 1000)
	for i := range v {
		v[i] = float32(r.IntN(41) - 20) // many ties
	}
	ids, acts := make([]int, 64), make([]float32, 64)
	topAbs(ids, acts, v)
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if x, y := math.Abs(float64(v[a])), math.Abs(float64(v[b])); x != y {
			if x > y {
				return -1
			}
			return 1
		}
		return 0
	})
	if !slices.Equal(ids, order[:64]) {
		t.Errorf("topAbs of 1000 tied values = %v, want %v", ids, order[:64])
	}
}

// TestForwardFactors: for every kind of model, layer and head, ‖R_h a‖
// equals ‖W_h a‖ computed directly from the output projection's weights
// (dequantized, in float64) for random a, within 1e-5 relative; and
// cholesky factors a semidefinite Gram matrix with dependent and zero
// columns exactly, without NaN.
func TestForwardFactors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, mc := range forwardModels(t) {
		t.Run(mc.name, func(t *testing.T) {
			m, err := mc.build()
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			d := m.d
			hd := d.headDim
			R := m.forwardFactors()
			y := make([]float32, hd)
			var worst float64
			for l := range d.layers {
				w, inOut := m.net.outProj(l)
				for h := range d.heads {
					a := make([]float32, hd)
					for i := range a {
						a[i] = float32(r.NormFloat64())
					}
					var ss float64
					for o := range d.hidden {
						var s float64
						for i, v := range a {
							c := h*hd + i
							if inOut {
								s += float64(w.At(c, o)) * float64(v)
							} else {
								s += float64(w.At(o, c)) * float64(v)
							}
						}
						ss += s * s
					}
					n := tensor.UpperLen(hd)
					tensor.MulUpper(y, R[l][h*n:(h+1)*n], a)
					want, got := math.Sqrt(ss), norm(y)
					rel := math.Abs(got-want) / want
					worst = max(worst, rel)
					if !(rel < 1e-5) {
						t.Errorf("layer %d head %d: ‖R a‖ = %v, ‖W_h a‖ = %v", l, h, got, want)
					}
				}
			}
			t.Logf("largest relative difference %.3g", worst)
		})
	}

	// Columns: c0, 2·c0 (dependent), 0, c3: G is semidefinite of rank 2.
	cols := [][]float64{{1, 2, 3}, {2, 4, 6}, {0, 0, 0}, {1, -1, 0.5}}
	n := len(cols)
	g := make([]float64, n*n)
	for a := range n {
		for b := a; b < n; b++ {
			for i := range cols[a] {
				g[a*n+b] += cols[a][i] * cols[b][i]
			}
		}
	}
	G := slices.Clone(g)
	cholesky(g, n)
	rf := func(i, j int) float64 { // R, upper triangular
		if j < i {
			return 0
		}
		return g[i*n+j]
	}
	for a := range n {
		for b := a; b < n; b++ {
			var s float64
			for k := range n {
				s += rf(k, a) * rf(k, b)
			}
			if math.IsNaN(s) || math.Abs(s-G[a*n+b]) > 1e-5*max(1, math.Abs(G[a*n+b])) {
				t.Errorf("semidefinite G: (RᵀR)[%d][%d] = %v, want %v", a, b, s, G[a*n+b])
			}
		}
	}
}

// TestForwardDecodeMatchesCacheOff: a decode step's forward answers through
// the cache are those of a cache-off pass over the whole sequence (bytes
// aside: the cache-off pass reads no cached keys).
func TestForwardDecodeMatchesCacheOff(t *testing.T) {
	ids := []int{5, 9, 2, 7, 11}
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			m := openTestModel(t, tinyShape(a))
			logits := [][]float32{make([]float32, m.d.vocab)}
			c, _ := m.NewCache(1, 8)
			if err := m.ForwardInside(c, prompt(ids[:4]), logits, &engine.Inside{Forward: 3}); err != nil {
				t.Fatal(err)
			}
			step := &engine.Inside{Forward: 3}
			b := &engine.Batch{Tokens: [][]int{{ids[4]}}, Positions: [][]int{{4}}, Mask: [][]bool{{true, true, true, true, true}}}
			if err := m.ForwardInside(c, b, logits, step); err != nil {
				t.Fatal(err)
			}
			full := &engine.Inside{Forward: 3}
			c2, _ := m.NewCache(1, 8)
			if err := m.ForwardInside(c2, prompt(ids), logits, full); err != nil {
				t.Fatal(err)
			}
			close := func(what string, x, y []float64) {
				for i := range x {
					if d := math.Abs(x[i] - y[i]); d > 1e-5*max(1, math.Abs(y[i])) {
						t.Errorf("%s %d: cached %v, cache off %v", what, i, x[i], y[i])
					}
				}
			}
			close("norm", step.Norms, full.Norms)
			close("head", step.HeadNorms, full.HeadNorms)
			if !slices.Equal(step.NeuronIDs, full.NeuronIDs) {
				t.Errorf("neurons %v cached, %v cache off", step.NeuronIDs, full.NeuronIDs)
			}
			if step.EmbedBytes*5 != full.EmbedBytes || step.AttnBytes[0] <= full.AttnBytes[0] || step.MLPBytes[0] != full.MLPBytes[0] {
				t.Errorf("bytes: cached step embedding %d attention %d MLP %d, cache off %d %d %d; want one row against five, the cached keys read, the same MLP",
					step.EmbedBytes, step.AttnBytes[0], step.MLPBytes[0], full.EmbedBytes, full.AttnBytes[0], full.MLPBytes[0])
			}
		})
	}
}

// BenchmarkRecordForward times decode steps of SmolLM2-135M's shape (bf16,
// random weights) after a 64-token prompt: with Forward ("off"), with the
// forward pass recorded (10 neurons a layer, "on"), and with
// ForwardInside asking nothing ("alone": the pass that runs outside the
// batcher, as a recorded one does), in the balanced order off, on, alone,
// alone, on, off so that the machine's drift cancels. ns/op is those six
// steps; on/off is the median over iterations of one iteration's time on
// over its time off, on/alone the same against alone (the recording's own
// work). The head factors are made once before the timing (factors-ms).
func BenchmarkRecordForward(b *testing.B) {
	s, _ := KnownShape("smollm2-135m")
	m, err := NewRandom("bench", s, tensor.BF16, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const P = 64
	ids := make([]int, P)
	for i := range ids {
		ids[i] = (i*7919 + 13) % s.VocabSize
	}
	c, err := m.NewCache(1, P+1)
	if err != nil {
		b.Fatal(err)
	}
	logits := [][]float32{make([]float32, s.VocabSize)}
	if err := m.Forward(c, prompt(ids), logits); err != nil {
		b.Fatal(err)
	}
	mask := make([]bool, P+1)
	for i := range mask {
		mask[i] = true
	}
	step := &engine.Batch{Tokens: [][]int{{42}}, Positions: [][]int{{P}}, Mask: [][]bool{mask}}
	on, alone := &engine.Inside{Forward: 10}, &engine.Inside{}
	start := time.Now()
	m.headFactors()
	factors := time.Since(start)
	const off, rec, plain = 0, 1, 2
	run := func(mode int) time.Duration {
		c.Truncate(P)
		t0 := time.Now()
		var err error
		switch mode {
		case off:
			err = m.Forward(c, step, logits)
		case rec:
			err = m.ForwardInside(c, step, logits, on)
		case plain:
			err = m.ForwardInside(c, step, logits, alone)
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for mode := range 3 {
		run(mode)
	}
	var onOff, onAlone []float64
	var total [3]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var t [3]time.Duration
		for _, mode := range []int{off, rec, plain, plain, rec, off} {
			t[mode] += run(mode)
		}
		onOff, onAlone = append(onOff, float64(t[rec])/float64(t[off])), append(onAlone, float64(t[rec])/float64(t[plain]))
		for mode := range t {
			total[mode] += t[mode]
		}
	}
	median := func(x []float64) float64 {
		slices.Sort(x)
		return x[len(x)/2]
	}
	b.ReportMetric(float64(factors.Milliseconds()), "factors-ms")
	b.ReportMetric(median(onOff), "on/off")
	b.ReportMetric(median(onAlone), "on/alone")
	b.ReportMetric(float64(total[off].Microseconds())/float64(2*b.N), "off-us/step")
	b.ReportMetric(float64(total[rec].Microseconds())/float64(2*b.N), "on-us/step")
}
