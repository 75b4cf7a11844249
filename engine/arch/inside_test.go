package arch

import (
	"math"
	"slices"
	"testing"

	"tracer/engine"
)

// leftPadded is a batch of two rows of n tokens: row 0 real, row 1 with
// its first pad slots masked, positions as transformers counts them.
func leftPadded(n, pad int) *engine.Batch {
	b := &engine.Batch{}
	for r := range 2 {
		var toks, pos []int
		var mask []bool
		for i := range n {
			real := r == 0 || i >= pad
			toks = append(toks, 3+i+r)
			mask = append(mask, real)
			p := i
			if r == 1 {
				p = max(i-pad, 0)
				if !real {
					p = 1
				}
			}
			pos = append(pos, p)
		}
		b.Tokens, b.Positions, b.Mask = append(b.Tokens, toks), append(b.Positions, pos), append(b.Mask, mask)
	}
	return b
}

// forwardInside runs one ForwardInside on a fresh two-row cache.
func forwardInside(t *testing.T, m *Model, b *engine.Batch, in *engine.Inside) [][]float32 {
	t.Helper()
	c, err := m.NewCache(2, 16)
	if err != nil {
		t.Fatal(err)
	}
	out := [][]float32{make([]float32, m.d.vocab), make([]float32, m.d.vocab)}
	if err := m.ForwardInside(c, b, out, in); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestForwardInside checks the hooks on every architecture over a
// left-padded prefill: the logits are Forward's, bit for bit; every
// attention row is a distribution with exactly 0 on padding and later
// keys; a pad's own query (no key allowed) gets the spread uniform
// computes; the last query's row is the same with AllAttention or without;
// and the lens of layer l is head(final_norm(h_l)) of ForwardAll's hidden
// states, the last layer's being the logits.
func TestForwardInside(t *testing.T) {
	const n, pad = 6, 2
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			m := openTestModel(t, tinyShape(a))
			d := m.d
			b := leftPadded(n, pad)
			all := &engine.Inside{AllAttention: true, Lens: true}
			got := forwardInside(t, m, b, all)

			c, _ := m.NewCache(2, 16)
			want := [][]float32{make([]float32, d.vocab), make([]float32, d.vocab)}
			if err := m.Forward(c, b, want); err != nil {
				t.Fatal(err)
			}
			for r := range want {
				if !slices.Equal(got[r], want[r]) {
					t.Errorf("row %d: ForwardInside's logits differ from Forward's", r)
				}
			}

			if all.Layers != d.layers || all.Heads != d.heads || all.Queries != n || all.Keys != n {
				t.Fatalf("answers for %d layers, %d heads, %d queries, %d keys; want %d, %d, %d, %d", all.Layers, all.Heads, all.Queries, all.Keys, d.layers, d.heads, n, n)
			}
			last := &engine.Inside{Attention: true}
			forwardInside(t, m, b, last)
			at := func(in *engine.Inside, r, l, h, q int) []float32 {
				off := (((r*in.Layers+l)*in.Heads+h)*in.Queries + q) * in.Keys
				return in.Attn[off : off+in.Keys]
			}
			for r := range 2 {
				for l := range d.layers {
					for h := range d.heads {
						for q := range n {
							w := at(all, r, l, h, q)
							checkRow(t, m, b.Mask[r], q, w)
						}
						if !slices.Equal(at(all, r, l, h, n-1), at(last, r, l, h, 0)) {
							t.Errorf("row %d layer %d head %d: the last query's weights differ with and without AllAttention", r, l, h)
						}
					}
				}
			}

			c, _ = m.NewCache(2, 16)
			o, err := m.ForwardAll(c, b)
			if err != nil {
				t.Fatal(err)
			}
			normed := make([]float32, d.hidden)
			ref := make([]float32, d.vocab)
			for r := range 2 {
				for l := range d.layers {
					if l < d.layers-1 {
						m.net.norm(normed, o.Hidden[l+1][r][n-1])
						m.pool.MatMul(ref, m.net.head(), normed)
					} else {
						copy(ref, want[r])
					}
					lens := all.LensLogits[(r*d.layers+l)*d.vocab : (r*d.layers+l+1)*d.vocab]
					for v := range ref {
						if diff := math.Abs(float64(lens[v] - ref[v])); diff > 1e-5 {
							t.Fatalf("row %d layer %d id %d: lens logit %v, want %v", r, l, v, lens[v], ref[v])
						}
					}
				}
			}
		})
	}
}

// checkRow checks one query's attention weights w over the keys of a
// row with the given mask: a distribution, 0 on masked keys and keys after
// the query; a query with no key allowed gets uniform's even spread.
func checkRow(t *testing.T, m *Model, mask []bool, q int, w []float32) {
	t.Helper()
	if !slices.Contains(mask[:q+1], true) {
		p := &pass{m: m}
		share := 1 / float32(p.uniformCount(len(w), mask, q))
		for j, v := range w {
			want := float32(0)
			if p.uniformKeeps(j, mask, q) {
				want = share
			}
			if v != want {
				t.Fatalf("pad query %d key %d: got %v, want %v", q, j, v, want)
			}
		}
		return
	}
	var sum float64
	for j, v := range w {
		if (j > q || !mask[j]) && v != 0 {
			t.Fatalf("query %d key %d (masked or later): weight %v, want 0", q, j, v)
		}
		sum += float64(v)
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Fatalf("query %d: weights sum to %v, want 1", q, sum)
	}
}

// TestForwardInsideDecodeMatchesCacheOff: a decode step's attention and
// lens through the cache equal a cache-off pass over the whole sequence.
func TestForwardInsideDecodeMatchesCacheOff(t *testing.T) {
	ids := []int{5, 9, 2, 7, 11}
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			m := openTestModel(t, tinyShape(a))
			ask := func() *engine.Inside { return &engine.Inside{Attention: true, Lens: true} }
			c, _ := m.NewCache(1, 8)
			logits := [][]float32{make([]float32, m.d.vocab)}
			if err := m.ForwardInside(c, prompt(ids[:4]), logits, ask()); err != nil {
				t.Fatal(err)
			}
			step := ask()
			b := &engine.Batch{Tokens: [][]int{{ids[4]}}, Positions: [][]int{{4}}, Mask: [][]bool{{true, true, true, true, true}}}
			if err := m.ForwardInside(c, b, logits, step); err != nil {
				t.Fatal(err)
			}
			full := ask()
			c2, _ := m.NewCache(1, 8)
			if err := m.ForwardInside(c2, prompt(ids), logits, full); err != nil {
				t.Fatal(err)
			}
			if step.Keys != 5 || full.Keys != 5 {
				t.Fatalf("keys %d and %d, want 5", step.Keys, full.Keys)
			}
			for _, pair := range [][2][]float32{{step.Attn, full.Attn}, {step.LensLogits, full.LensLogits}} {
				if len(pair[0]) != len(pair[1]) {
					t.Fatalf("%d and %d values", len(pair[0]), len(pair[1]))
				}
				for i := range pair[0] {
					if diff := math.Abs(float64(pair[0][i] - pair[1][i])); diff > 1e-5 {
						t.Fatalf("value %d: cached %v, cache off %v", i, pair[0][i], pair[1][i])
					}
				}
			}
		})
	}
}

// TestForwardInsideNil: a nil Inside is a programmer's mistake reported as
// an error, not a panic.
func TestForwardInsideNil(t *testing.T) {
	m := openTestModel(t, tinyShape("llama"))
	c, _ := m.NewCache(1, 4)
	err := m.ForwardInside(c, prompt([]int{1}), [][]float32{make([]float32, m.d.vocab)}, nil)
	if err == nil {
		t.Error("got no error for a nil Inside, want one")
	}
}

// FuzzForwardInside runs a prefill and a decode step with arbitrary
// masks, sizes and questions on each architecture: no panic, the logits
// are Forward's bit for bit, every recorded attention row is a
// distribution with 0 on masked and later keys (checkRow), and the
// forward pass (asked with n%4 neurons, 0: not asked) is finite, each
// layer entering as the one before left.
func FuzzForwardInside(f *testing.F) {
	models := map[string]*Model{}
	for _, a := range archs {
		dir := f.TempDir()
		writeTestModel(f, dir, tinyShape(a), 1)
		m, err := OpenHF(dir)
		if err != nil {
			f.Fatal(err)
		}
		defer m.(*Model).Close()
		models[a] = m.(*Model)
	}
	f.Add(uint8(0), uint8(2), uint8(5), uint16(0b0011), true, true)
	f.Add(uint8(1), uint8(1), uint8(1), uint16(0), false, true)
	f.Add(uint8(2), uint8(2), uint8(8), uint16(0xffff), true, false)
	f.Fuzz(func(t *testing.T, arch, rows, n uint8, masked uint16, all, lens bool) {
		m := models[archs[int(arch)%len(archs)]]
		R, N := 1+int(rows)%2, 1+int(n)%8
		b := &engine.Batch{}
		for r := range R {
			var toks, pos []int
			var mask []bool
			for i := range N + 1 {
				// Bit r·8+i masks prompt slot i of row r (the decode
				// token at slot N is always real).
				real := i == N || masked&(1<<(r*8+i)) == 0
				toks, pos, mask = append(toks, (7*i+r)%m.d.vocab), append(pos, i), append(mask, real)
			}
			b.Tokens, b.Positions, b.Mask = append(b.Tokens, toks), append(b.Positions, pos), append(b.Mask, mask)
		}
		step := func(lo, hi int) *engine.Batch {
			s := &engine.Batch{}
			for r := range R {
				s.Tokens = append(s.Tokens, b.Tokens[r][lo:hi])
				s.Positions = append(s.Positions, b.Positions[r][lo:hi])
				s.Mask = append(s.Mask, b.Mask[r][:hi])
			}
			return s
		}
		c1, _ := m.NewCache(R, N+1)
		c2, _ := m.NewCache(R, N+1)
		got := make([][]float32, R)
		want := make([][]float32, R)
		for r := range R {
			got[r], want[r] = make([]float32, m.d.vocab), make([]float32, m.d.vocab)
		}
		for _, span := range [][2]int{{0, N}, {N, N + 1}} {
			sb := step(span[0], span[1])
			in := &engine.Inside{Attention: true, AllAttention: all, Lens: lens, Forward: int(n) % 4}
			if err := m.ForwardInside(c1, sb, got, in); err != nil {
				t.Fatal(err)
			}
			if err := m.Forward(c2, sb, want); err != nil {
				t.Fatal(err)
			}
			for r := range R {
				if !slices.Equal(got[r], want[r]) {
					t.Fatalf("row %d: ForwardInside's logits differ from Forward's", r)
				}
			}
			if lens && len(in.LensLogits) != R*m.d.layers*m.d.vocab {
				t.Fatalf("%d lens logits, want %d", len(in.LensLogits), R*m.d.layers*m.d.vocab)
			}
			if in.Forward > 0 {
				per := engine.ForwardNorms(m.d.layers)
				for r := range R {
					ns := in.Norms[r*per : (r+1)*per]
					for l := 1; l < m.d.layers; l++ {
						if ns[1+5*l+normIn] != ns[1+5*(l-1)+normOut] {
							t.Fatalf("row %d layer %d enters at %v, layer %d left at %v", r, l, ns[1+5*l+normIn], l-1, ns[1+5*(l-1)+normOut])
						}
					}
				}
				for _, v := range append(slices.Clone(in.Norms), in.HeadNorms...) {
					if !(v >= 0) || math.IsInf(v, 0) {
						t.Fatalf("a forward norm is %v", v)
					}
				}
			}
			for r := range R {
				for lh := range m.d.layers * m.d.heads {
					for q := range in.Queries {
						off := ((r*m.d.layers*m.d.heads+lh)*in.Queries + q) * in.Keys
						checkRow(t, m, sb.Mask[r], span[1]-in.Queries+q, in.Attn[off:off+in.Keys])
					}
				}
			}
		}
	})
}
