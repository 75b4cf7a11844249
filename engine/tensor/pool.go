package tensor

import (
	"runtime"
	"sync"
)

// minChunkMACs is the least work (multiply-adds) worth handing to another
// goroutine: below it the hand-off costs more than it saves.
const minChunkMACs = 16 << 10

// Job is work over an index range [0, n) that can be split: Run(lo, hi)
// handles indices lo..hi-1 and must not touch the others' outputs.
type Job interface {
	Run(lo, hi int)
}

// Pool runs kernels on a fixed set of goroutines, splitting the rows (or
// columns) of the output between them; the calling goroutine takes the
// first share. A nil *Pool, or one with one worker, runs everything on the
// calling goroutine. A Pool runs one kernel at a time: concurrent callers
// wait their turn, and a Job must not call back into its Pool. Close stops
// the goroutines.
type Pool struct {
	mu      sync.Mutex
	workers int
	work    chan chunk // nil when single-threaded or closed
	done    sync.WaitGroup

	// The jobs of the kernel methods live here so that handing them to the
	// workers allocates nothing.
	mm  matMulJob
	mmt matMulTJob
}

type chunk struct {
	job    Job
	lo, hi int
}

// NewPool starts a pool of workers goroutines (the caller counts as one);
// workers <= 0 means runtime.GOMAXPROCS(0).
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := &Pool{workers: workers}
	if p.workers > 1 {
		p.work = make(chan chunk)
		for range p.workers - 1 {
			go p.worker(p.work)
		}
	}
	return p
}

func (p *Pool) worker(work <-chan chunk) {
	for c := range work {
		c.job.Run(c.lo, c.hi)
		p.done.Done()
	}
}

// Workers returns the number of goroutines kernels run on.
func (p *Pool) Workers() int {
	if p == nil {
		return 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers
}

// Close stops the worker goroutines; later calls run on the caller alone.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.work != nil {
		close(p.work)
		p.work = nil
	}
	p.workers = 1
}

// Parallel calls job.Run over [0, n), split into at most Workers() ranges
// of at least grain indices each, and returns when all are done.
func (p *Pool) Parallel(n, grain int, job Job) {
	if p == nil {
		job.Run(0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parallel(n, grain, job)
}

// parallel is Parallel with p.mu held.
func (p *Pool) parallel(n, grain int, job Job) {
	chunks := min(p.workers, n/max(grain, 1))
	if chunks <= 1 || p.work == nil {
		job.Run(0, n)
		return
	}
	size := (n + chunks - 1) / chunks
	p.done.Add(chunks - 1)
	for c := 1; c < chunks; c++ {
		p.work <- chunk{job: job, lo: min(c*size, n), hi: min((c+1)*size, n)}
	}
	job.Run(0, size)
	p.done.Wait()
}

// grain returns how many output rows make a chunk worth sharing when each
// row costs perRow multiply-adds.
func grain(perRow int) int { return max(1, minChunkMACs/max(perRow, 1)) }

type matMulJob struct {
	dst, x []float32
	w      Matrix
	n      int
}

func (j *matMulJob) Run(lo, hi int) { matMulRows(j.dst, j.w, j.x, j.n, lo, hi) }

// matMulTJob splits output columns in blocks of 16, to keep each share's
// slice of a weight row in whole cache lines: indices are block numbers.
type matMulTJob struct {
	dst, x []float32
	w      Matrix
	n      int
}

func (j *matMulTJob) Run(lo, hi int) {
	matMulTCols(j.dst, j.w, j.x, j.n, min(lo*16, j.w.Cols), min(hi*16, j.w.Cols))
}

// MatMul is MatMul split over the pool by weight rows.
func (p *Pool) MatMul(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("MatMul", dst, w.Rows, w.Cols, x)
	if p == nil {
		matMulRows(dst, w, x, n, 0, w.Rows)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mm = matMulJob{dst: dst, x: x, w: w, n: n}
	p.parallel(w.Rows, grain(w.Cols*n), &p.mm)
	p.mm = matMulJob{}
}

// MatVec is MatVec split over the pool by weight rows.
func (p *Pool) MatVec(dst []float32, w Matrix, x []float32) { p.MatMul(dst, w, x) }

// MatMulT is MatMulT split over the pool by output columns.
func (p *Pool) MatMulT(dst []float32, w Matrix, x []float32) {
	n := checkMatMul("MatMulT", dst, w.Cols, w.Rows, x)
	if p == nil {
		matMulTCols(dst, w, x, n, 0, w.Cols)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mmt = matMulTJob{dst: dst, x: x, w: w, n: n}
	p.parallel((w.Cols+15)/16, grain(w.Rows*n*16), &p.mmt)
	p.mmt = matMulTJob{}
}
