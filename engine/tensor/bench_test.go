package tensor

import (
	"fmt"
	"testing"
	"time"
)

// Benchmarks at the shapes of SmolLM2-135M (hidden 576, MLP 1536, vocab
// 49152) and GPT-2 (768, 3072, 50257), with one and two threads. SetBytes
// counts the weight bytes at their dtype, so MB/s reads as the weight
// bandwidth a decode step gets; prefill reports GFLOP/s.

// benchShapes are (out, in) weights as MatVec reads them.
var benchShapes = [][2]int{
	{576, 576}, {1536, 576}, {576, 1536}, {49152, 576},
	{768, 768}, {3072, 768}, {768, 3072}, {50257, 768},
}

// benchMatrix returns a random (rows, cols) matrix of dtype, in huge pages
// where possible (as arch.NewRandom's weights; never freed).
func benchMatrix(dt DType, rows, cols int) Matrix {
	data := benchBytes(rows * cols * dt.Size())
	FillUniform(data, dt, 0.05, 1)
	m, err := NewMatrix(data, dt, rows, cols)
	if err != nil {
		panic(err)
	}
	return m
}

func benchVec(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%17)/17 - 0.5
	}
	return v
}

func BenchmarkMatVec(b *testing.B) {
	for _, dt := range []DType{F32, BF16, F16} {
		for _, sh := range benchShapes {
			w := benchMatrix(dt, sh[0], sh[1])
			x, dst := benchVec(sh[1]), make([]float32, sh[0])
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%dx%d/threads=%d", dt, sh[0], sh[1], threads), func(b *testing.B) {
					pool := NewPool(threads)
					defer pool.Close()
					b.SetBytes(w.Bytes())
					b.ReportAllocs()
					for b.Loop() {
						pool.MatVec(dst, w, x)
					}
				})
			}
		}
	}
}

// BenchmarkMatMul is prefill: 64 rows of x against each layer weight.
func BenchmarkMatMul(b *testing.B) {
	const n = 64
	for _, dt := range []DType{F32, BF16, F16} {
		for _, sh := range benchShapes {
			if sh[0] > 4096 {
				continue // the head runs on one position only
			}
			w := benchMatrix(dt, sh[0], sh[1])
			x, dst := benchVec(n*sh[1]), make([]float32, n*sh[0])
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%dx%dx%d/threads=%d", dt, sh[0], sh[1], n, threads), func(b *testing.B) {
					pool := NewPool(threads)
					defer pool.Close()
					b.SetBytes(w.Bytes())
					for b.Loop() {
						pool.MatMul(dst, w, x)
					}
					flops := 2 * float64(sh[0]) * float64(sh[1]) * n * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkMatMulT is GPT-2's Conv1D weights, stored (in, out): decode
// (one row of x) and prefill (64 rows).
func BenchmarkMatMulT(b *testing.B) {
	for _, dt := range []DType{F32, BF16} {
		for _, sh := range [][2]int{{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}} {
			w := benchMatrix(dt, sh[0], sh[1])
			for _, n := range []int{1, 64} {
				x, dst := benchVec(n*sh[0]), make([]float32, n*sh[1])
				for _, threads := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/%dx%dx%d/threads=%d", dt, sh[0], sh[1], n, threads), func(b *testing.B) {
						pool := NewPool(threads)
						defer pool.Close()
						b.SetBytes(w.Bytes())
						for b.Loop() {
							pool.MatMulT(dst, w, x)
						}
						flops := 2 * float64(sh[0]) * float64(sh[1]) * float64(n) * float64(b.N)
						b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// BenchmarkDecodeAttention is one kv head's attention in a decode step of
// SmolLM2-135M: the scores of its 3 query heads over 128 cached keys of 64
// dims (MatMul), then their weights times the values (MatMulT). The keys
// and values are cold, as after a step's weights streamed through the
// caches: each op takes the next of 1,000 kv heads' caches (64 MB).
func BenchmarkDecodeAttention(b *testing.B) {
	const keys, hd, rep, heads = 128, 64, 3, 1000
	kv := benchVec(heads * 2 * keys * hd)
	q, w, o := benchVec(rep*hd), make([]float32, rep*keys), make([]float32, rep*hd)
	b.SetBytes(2 * keys * hd * 4)
	h := 0
	for b.Loop() {
		K := F32Matrix(kv[2*h*keys*hd:(2*h+1)*keys*hd], keys, hd)
		V := F32Matrix(kv[(2*h+1)*keys*hd:(2*h+2)*keys*hd], keys, hd)
		MatMul(w, K, q)
		MatMulT(o, V, w)
		h = (h + 1) % heads
	}
}

// BenchmarkPoolForkJoin is the cost of one parallel call that does no
// work: publishing it, the workers claiming their pieces, and the join.
// A decode step of SmolLM2-135M makes about 240 such calls.
func BenchmarkPoolForkJoin(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			pool := NewPool(threads)
			defer pool.Close()
			var j nopJob
			b.ReportAllocs()
			for b.Loop() {
				pool.Parallel(64, 1, &j)
			}
		})
	}
}

type nopJob struct{}

func (nopJob) Run(lo, hi int) {}

func BenchmarkFillUniform(b *testing.B) {
	for _, dt := range []DType{F32, BF16} {
		b.Run(dt.String(), func(b *testing.B) {
			buf := make([]byte, 64<<20)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				FillUniform(buf, dt, 1, 1)
			}
		})
	}
}

// BenchmarkWarmAttention is the part of a SmolLM2-135M decode step (bf16
// weights) that Product.Warm changes, layer after layer over 30 layers:
// 2 MB of other weights stream through the caches (the MLP and o
// projections of a real step), then the k and v projections, then
// attention of 3 kv heads (3 query heads each) over 128 cached positions.
// Layers alternate between projecting without warming, so that attention
// reads its keys and values from memory ("cold"), and handing the
// projections the cache ranges that attention reads, as arch's warmKV
// does ("warm"): each reports µs per layer, projections and attention
// ("-layer-µs") and attention alone ("-attention-µs").
func BenchmarkWarmAttention(b *testing.B) {
	const layers, kvHeads, rep, hd, past, capacity = 30, 3, 3, 64, 128, 256
	type layer struct {
		rest, wk, wv Matrix
		K, V         []float32 // (kvHeads, capacity, hd)
		warmK, warmV [][]float32
	}
	ls := make([]layer, layers)
	for i := range ls {
		l := &ls[i]
		l.rest, l.wk, l.wv = benchMatrix(BF16, 1792, 576), benchMatrix(BF16, kvHeads*hd, 576), benchMatrix(BF16, kvHeads*hd, 576)
		l.K, l.V = benchVec(kvHeads*capacity*hd), benchVec(kvHeads*capacity*hd)
		for g := range kvHeads {
			l.warmK = append(l.warmK, l.K[g*capacity*hd:(g*capacity+past)*hd])
			l.warmV = append(l.warmV, l.V[g*capacity*hd:(g*capacity+past)*hd])
		}
	}
	x, restOut := benchVec(576), make([]float32, 1792)
	k, v := make([]float32, kvHeads*hd), make([]float32, kvHeads*hd)
	q, w, o := benchVec(rep*hd), make([]float32, rep*past), make([]float32, rep*hd)
	p := NewPool(1)
	defer p.Close()
	var proj, attention [2]time.Duration
	var count [2]int
	i := 0
	for b.Loop() {
		l, mode := &ls[i%layers], i%2 // 30 layers: each in both modes in turn
		i++
		p.MatVec(restOut, l.rest, x)
		start := time.Now()
		pk, pv := Product{Dst: k, W: l.wk}, Product{Dst: v, W: l.wv}
		if mode == 1 {
			pk.Warm, pv.Warm = l.warmK, l.warmV
		}
		p.MatMuls(x, pk, pv)
		mid := time.Now()
		for g := range kvHeads {
			MatMul(w, F32Matrix(l.warmK[g], past, hd), q)
			for h := range rep {
				SoftmaxScaled(w[h*past:(h+1)*past], 8)
			}
			MatMulT(o, F32Matrix(l.warmV[g], past, hd), w)
		}
		end := time.Now()
		proj[mode] += end.Sub(start)
		attention[mode] += end.Sub(mid)
		count[mode]++
	}
	for mode, name := range []string{"cold", "warm"} {
		n := float64(max(count[mode], 1))
		b.ReportMetric(proj[mode].Seconds()*1e6/n, name+"-layer-µs")
		b.ReportMetric(attention[mode].Seconds()*1e6/n, name+"-attention-µs")
	}
}
