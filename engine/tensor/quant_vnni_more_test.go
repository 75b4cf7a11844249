package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQ5_0VNNIMatchesGo: the Q5_0 VNNI kernels (ggml's layout, a row
// alone and four rows a quarter apart; packed, one quad and two quads in
// two streams) give dotQ5_0's bits, hence llama.cpp's, for random rows
// of every length from 1 to 40 blocks (groups of eight and blocks left):
// sane scales, and every byte random (scales NaN, infinite, subnormal);
// activations of every magnitude, and all equal (the extreme lanes).
// Where the VNNI kernels do not run only the Go twin is there to check.
func TestQ5_0VNNIMatchesGo(t *testing.T) {
	if !useVNNI {
		t.Skip("no VNNI kernels on this machine or build")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for blocks := 1; blocks <= 40; blocks++ {
		for rep := range 6 {
			t.Run(fmt.Sprintf("%d blocks/%d", blocks, rep), func(t *testing.T) {
				w := randomBlocks(r, Q5_0, 1, 32*blocks)
				if rep >= 3 { // every byte random, the scales too
					for i := range w {
						w[i] = byte(r.Uint32())
					}
				}
				x := make([]float32, 32*blocks)
				for i := range x {
					x[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()*3))
					if rep == 2 {
						x[i] = float32(1 - 2*(i%2)) // ±1: ±127 after rounding
					}
				}
				checkQ8Dots(t, Q5_0, false, w, x)
			})
		}
	}
}

// TestQ5_0PackedRows: Q5_0 rows packed and back (dequantized) give the
// weights of ggml's layout, and a product (several rows of x, split over
// a pool or not) the bits of the Go twin, a row's the same whatever the
// number of rows of x.
func TestQ5_0PackedRows(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	pool := NewPool(2)
	defer pool.Close()
	for _, sh := range [][2]int{{4, 32}, {5, 288}, {8, 576}, {11, 896}, {33, 1536}, {64, 224}} {
		rows, cols := sh[0], sh[1]
		m, err := NewQuantMatrix(randomBlocks(r, Q5_0, rows, cols), Q5_0, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		ms := []Matrix{m}
		if PackedLayout(Q5_0) {
			pm := packedCopy(t, m)
			a, b := make([]float32, cols), make([]float32, cols)
			for i := range rows {
				m.Row(a, i)
				pm.Row(b, i)
				if !slices.Equal(a, b) {
					t.Fatalf("%dx%d: row %d of the packed matrix gives other weights", rows, cols, i)
				}
			}
			ms = append(ms, pm)
		}
		const n = 3
		x := make([]float32, n*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		var a qActs
		a.quantize(Q5_0, x, n, cols)
		for _, mm := range ms {
			for _, p := range []*Pool{nil, pool} {
				got := make([]float32, n*rows)
				p.MatMul(got, mm, x)
				for tk := range n {
					one := make([]float32, rows)
					p.MatMul(one, mm, x[tk*cols:(tk+1)*cols])
					for i := range rows {
						want := dotQ5_0(m.quantRow(i), a.d[tk*cols/32:(tk+1)*cols/32], a.qs[tk*cols:(tk+1)*cols])
						if !sameBits(got[tk*rows+i], want) || !sameBits(one[i], want) {
							t.Fatalf("%dx%d packed %v pool %v: x row %d, out %d: got %v (batch) and %v (alone), want %v",
								rows, cols, mm.packed, p != nil, tk, i, got[tk*rows+i], one[i], want)
						}
					}
				}
			}
		}
	}
}
