package bench

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"tracer/engine/internal/mmap"
)

// Bandwidth is the main-memory read bandwidth with some number of threads,
// measured as tools/membw.c's read kernel does: every thread sums its
// contiguous share of one large array with four independent 16-wide
// vector accumulators, best and median of several passes (GB = 1e9 bytes).
type Bandwidth struct {
	Threads    int     `json:"threads"`
	BestGBps   float64 `json:"best_gbps"`
	MedianGBps float64 `json:"median_gbps"`
	WorstGBps  float64 `json:"worst_gbps,omitempty"` // the slowest pass: with BestGBps, the spread
}

// FMAPeak is the FP32 fused multiply-add throughput with some number of
// threads: each runs 16 independent vector accumulators (14 with AVX2,
// which has 16 registers in all), acc = acc·x + y.
type FMAPeak struct {
	Threads      int     `json:"threads"`
	BestGFLOPS   float64 `json:"best_gflops"`
	MedianGFLOPS float64 `json:"median_gflops"`
}

// MeasureRead times reps passes of the read kernel over a (len a multiple
// of 64 per thread) split in threads equal parts, after one warm-up pass.
func MeasureRead(a []float32, threads, reps int) Bandwidth {
	return measureSweeps(a, threads, reps, 1)
}

// measureSweeps is MeasureRead with sweeps reads of a per pass: an array
// a cache holds is read in well under a millisecond, too short to time
// one sweep at a time.
func measureSweeps(a []float32, threads, reps, sweeps int) Bandwidth {
	threads, reps, sweeps = max(threads, 1), max(reps, 1), max(sweeps, 1)
	chunks := len(a) / 64
	share := func(t int) []float32 {
		return a[chunks*t/threads*64 : chunks*(t+1)/threads*64]
	}
	pass := func() {
		if threads == 1 {
			for range sweeps {
				readSum(a[:chunks*64])
			}
			return
		}
		inParallel(threads, func(t int) {
			for range sweeps {
				readSum(share(t))
			}
		})
	}
	pass()
	best, median, worst := timePasses(reps, pass)
	bytes := float64(chunks*64*4) * float64(sweeps)
	return Bandwidth{Threads: threads, BestGBps: bytes / best / 1e9, MedianGBps: bytes / median / 1e9, WorstGBps: bytes / worst / 1e9}
}

// MeasureFMA times reps runs of the FMA kernel, iters rounds per thread.
func MeasureFMA(threads, reps, iters int) FMAPeak {
	threads, reps = max(threads, 1), max(reps, 1)
	perRound, _ := fmaRounds(1)
	best, median, _ := timePasses(reps, func() {
		inParallel(threads, func(int) { fmaRounds(iters) })
	})
	flops := float64(threads) * float64(iters) * float64(perRound)
	return FMAPeak{Threads: threads, BestGFLOPS: flops / best / 1e9, MedianGFLOPS: flops / median / 1e9}
}

// inParallel runs work(0) to work(threads-1), each on its own goroutine,
// and waits for all of them.
func inParallel(threads int, work func(t int)) {
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(t)
		}()
	}
	wg.Wait()
}

// timePasses times reps (at least 1) calls of run and returns the
// fastest, the median and the slowest, in seconds.
func timePasses(reps int, run func()) (best, median, worst float64) {
	secs := make([]float64, reps)
	for r := range secs {
		start := time.Now()
		run()
		secs[r] = time.Since(start).Seconds()
	}
	slices.Sort(secs)
	return secs[0], secs[reps/2], secs[reps-1]
}

// readSumGo is the read kernel in Go: four 16-wide accumulators.
func readSumGo(a []float32) float32 {
	var acc [64]float32
	for i := 0; i+64 <= len(a); i += 64 {
		c := a[i : i+64 : i+64]
		for l := range acc {
			acc[l] += c[l]
		}
	}
	var s float32
	for _, v := range acc {
		s += v
	}
	return s
}

// fmaRoundsGo is the FMA kernel in Go: 16 independent 16-wide
// accumulators, which the compiler keeps in memory, so it measures far
// below the machine's peak.
func fmaRoundsGo(iters int) (int, float32) {
	var acc [16][16]float32
	x, y := float32(0.999999), float32(1e-7)
	for it := 0; it < iters; it++ {
		for j := range acc {
			for l := range acc[j] {
				acc[j][l] = acc[j][l]*x + y
			}
		}
	}
	var s float32
	for j := range acc {
		s += acc[j][0]
	}
	return 16 * 16 * 2, s
}

// allocFloats returns n zeroed float32s of anonymous memory in huge pages
// (mmap.Huge), as membw.c's hugepages=1 does; free unmaps them.
func allocFloats(n int) (a []float32, free func(), err error) {
	mem, unmap, err := mmap.Huge(n * 4)
	if err != nil {
		return nil, nil, err
	}
	if n > 0 {
		a = unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), n)
	}
	return a, func() { unmap() }, nil
}
