package tensor

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestPoolMatMulAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := NewPool(2)
	defer pool.Close()
	w, _ := randMatrix(r, BF16, 512, 256)
	x := randVec(r, 256)
	dst := make([]float32, 512)
	if n := testing.AllocsPerRun(50, func() { pool.MatVec(dst, w, x) }); n != 0 {
		t.Errorf("Pool.MatVec allocates %v times per call, want 0", n)
	}
	wt, _ := randMatrix(r, F32, 256, 512)
	if n := testing.AllocsPerRun(50, func() { pool.MatMulT(dst, wt, x) }); n != 0 {
		t.Errorf("Pool.MatMulT allocates %v times per call, want 0", n)
	}
}

func TestPoolParallelCoversRange(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		p := NewPool(workers)
		for _, n := range []int{0, 1, 5, 9, 100, 1000} {
			for _, grain := range []int{1, 3, 64} {
				var j markJob
				j.seen = make([]int, n)
				p.Parallel(n, grain, &j)
				for i, c := range j.seen {
					if c != 1 {
						t.Errorf("workers %d, n %d, grain %d: index %d run %d times", workers, n, grain, i, c)
					}
				}
			}
		}
		p.Close()
		if got := p.Workers(); got != 1 {
			t.Errorf("Workers() after Close = %d, want 1", got)
		}
		var j markJob
		j.seen = make([]int, 10)
		p.Parallel(10, 1, &j) // after Close: on the caller
		if j.seen[9] != 1 {
			t.Error("Parallel after Close skipped work")
		}
	}
}

type markJob struct{ seen []int }

func (j *markJob) Run(lo, hi int) {
	for i := lo; i < hi; i++ {
		j.seen[i]++
	}
}

// TestPoolParksAndWakes runs kernels far apart in time, so that the
// workers park between them, and from several goroutines at once.
func TestPoolParksAndWakes(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				var j markJob
				j.seen = make([]int, 64)
				p.Parallel(64, 1, &j)
				for i, c := range j.seen {
					if c != 1 {
						t.Errorf("index %d run %d times", i, c)
						return
					}
				}
				if k%50 == 0 {
					for i := 0; i < 3*spinRounds; i++ {
						_ = p.state.Load() // let the workers give up spinning
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestMatMulsJoined: MatMuls on a pool runs its products as one job
// (matMulsJob), pieces crossing from one product into the next; every
// result must be MatMul's, bit for bit, for 1 to 5 products (5 more than
// maxJoined: one at a time) of row counts off the blocks of rowBlock,
// long and short rows, decode and prefill, with warming or without, and
// it allocates nothing.
func TestMatMulsJoined(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	back := make([]float32, 4096)
	warm := [][]float32{back[100:2000]}
	for _, dt := range []DType{F32, BF16, F16} {
		for _, cols := range []int{576, 64} {
			var ws []Matrix
			for _, rows := range []int{300, 17, 96, 8, 41} {
				w, _ := randMatrix(r, dt, rows, cols)
				ws = append(ws, w)
			}
			for _, n := range []int{1, 7} {
				x := randVec(r, n*cols)
				for k := 1; k <= len(ws); k++ {
					want := make([][]float32, k)
					prods := make([]Product, k)
					for i := range k {
						want[i] = make([]float32, n*ws[i].Rows)
						MatMul(want[i], ws[i], x)
						prods[i] = Product{Dst: make([]float32, n*ws[i].Rows), W: ws[i]}
						if i == 0 {
							prods[i].Warm = warm
						}
					}
					for _, threads := range []int{1, 2, 3} {
						p := NewPool(threads)
						p.MatMuls(x, prods...)
						for i := range k {
							checkEqual(t, fmt.Sprintf("%s %d cols n=%d %d products threads=%d: product %d", dt, cols, n, k, threads, i), prods[i].Dst, want[i])
							clear(prods[i].Dst)
						}
						if allocs := testing.AllocsPerRun(5, func() { p.MatMuls(x, prods...) }); allocs != 0 {
							t.Errorf("%s %d products threads=%d: %v allocations a call", dt, k, threads, allocs)
						}
						p.Close()
					}
				}
			}
		}
	}
}
