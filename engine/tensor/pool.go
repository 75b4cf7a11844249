package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minChunkMACs is the least work (multiply-adds) worth handing to another
// goroutine: below it the hand-off costs more than it saves.
const minChunkMACs = 16 << 10

// chunksPerWorker is how many pieces a kernel is cut into per worker: a
// worker slowed down (by another process on a shared machine) then
// leaves its unclaimed pieces to the others. Every piece starts its
// weight streams cold (and a prefill piece its first block without the
// prefetch of the block before), so fewer is faster on a quiet machine:
// with 2 threads on Zen 5, SmolLM2-135M's prefill ran at 260-267 GFLOP/s
// with 2 pieces a worker against 245-254 with 4, and decode at 48.0
// against 45.5 GB/s (bf16), 64.7 against 61.0 (f32).
const chunksPerWorker = 2

// spinRounds is how many times a worker polls for new work before it
// parks: about 50 µs on a 3.7 GHz Zen 4. A decode step calls the pool
// every few microseconds, so workers normally find the next kernel while
// spinning; between steps (sampling, recording) they park and cost
// nothing.
const spinRounds = 100_000

// Job is work over an index range [0, n) that can be split: Run(lo, hi)
// handles indices lo..hi-1 and must not touch the others' outputs.
type Job interface {
	Run(lo, hi int)
}

// Pool runs kernels on a fixed set of goroutines, splitting the rows (or
// columns) of the output between them; the calling goroutine works too. A
// nil *Pool, or one with one worker, runs everything on the calling
// goroutine. A Pool runs one kernel at a time: concurrent callers wait
// their turn, and a Job must not call back into its Pool. Close stops the
// goroutines.
//
// Fork and join are two atomic counters, not channels: the caller
// publishes a kernel by bumping a generation number that idle workers
// poll, every participant claims pieces with a compare-and-swap, and the
// caller waits for the count of finished pieces. Workers that have polled
// for spinRounds park on a channel and are woken by the next kernel.
type Pool struct {
	mu      sync.Mutex // one kernel at a time
	workers int
	closed  bool

	// state packs the current kernel's generation (high 32 bits), its
	// number of pieces (16 bits) and the next unclaimed piece (low 16
	// bits). A piece can only be claimed by a CAS on the whole word, so
	// a worker holding a stale generation never claims anything.
	state atomic.Uint64
	done  atomic.Int64 // pieces of the current generation finished

	// The current kernel: written by the caller before it publishes the
	// generation, read by a worker only after it has claimed a piece.
	job         Job
	n, pieceLen int

	sleepers []*sleeper // one per worker goroutine
	quit     atomic.Bool

	// The jobs of the kernel methods live here so that handing them to the
	// workers allocates nothing.
	mm  matMulJob
	mms matMulsJob
	mmt matMulTJob
	qmm quantJob // quant_matmul.go
	qa  qActs    // the rounded activations of the current product
}

// sleeper is a worker's parking place: parked is set while it waits on
// wake, which holds at most one token.
type sleeper struct {
	parked atomic.Bool
	wake   chan struct{}
	_      [48]byte // keep workers' flags on separate cache lines
}

// NewPool starts a pool of workers goroutines (the caller counts as one);
// workers <= 0 means runtime.GOMAXPROCS(0).
func NewPool(workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := &Pool{workers: workers}
	for range workers - 1 {
		s := &sleeper{wake: make(chan struct{}, 1)}
		p.sleepers = append(p.sleepers, s)
		go p.worker(s)
	}
	return p
}

// worker runs pieces of each new generation until the pool closes.
func (p *Pool) worker(s *sleeper) {
	seen := p.state.Load() >> 32
	for {
		gen := p.await(s, seen)
		if p.quit.Load() {
			return
		}
		seen = gen
		p.claim(gen)
	}
}

// await returns the generation after seen, spinning first and then
// parking.
func (p *Pool) await(s *sleeper, seen uint64) uint64 {
	for i := 0; ; i++ {
		if gen := p.state.Load() >> 32; gen != seen || p.quit.Load() {
			return gen
		}
		if i < spinRounds {
			if i&1023 == 1023 {
				// Let another goroutine of this P run: with more workers
				// than GOMAXPROCS, the caller may be waiting for ours.
				runtime.Gosched()
			}
			continue
		}
		// Announce the nap, then look again: a caller that bumps the
		// generation after our look sees parked and sends a token.
		s.parked.Store(true)
		if gen := p.state.Load() >> 32; gen != seen || p.quit.Load() {
			if !s.parked.CompareAndSwap(true, false) {
				<-s.wake // a caller saw us parked and sent a token
			}
			return gen
		}
		<-s.wake
		i = 0
	}
}

// claim runs unclaimed pieces of generation gen until none are left.
func (p *Pool) claim(gen uint64) {
	for {
		v := p.state.Load()
		next, total := v&0xffff, v>>16&0xffff
		if v>>32 != gen || next >= total {
			return
		}
		if !p.state.CompareAndSwap(v, v+1) {
			continue
		}
		lo := int(next) * p.pieceLen
		p.job.Run(lo, min(lo+p.pieceLen, p.n))
		p.done.Add(1)
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
	if p.closed {
		return
	}
	p.closed = true
	p.workers = 1
	p.quit.Store(true)
	p.state.Add(1 << 32)
	p.wakeAll()
}

// wakeAll sends a token to every parked worker.
func (p *Pool) wakeAll() {
	for _, s := range p.sleepers {
		if s.parked.Load() && s.parked.CompareAndSwap(true, false) {
			s.wake <- struct{}{}
		}
	}
}

// Parallel calls job.Run over [0, n), split into ranges of at least grain
// indices (a few per worker), and returns when all are done.
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
	pieces := min(p.workers*chunksPerWorker, n/max(grain, 1), 0xffff)
	if pieces <= 1 || p.workers <= 1 {
		job.Run(0, n)
		return
	}
	pieceLen := (n + pieces - 1) / pieces
	pieces = (n + pieceLen - 1) / pieceLen
	p.job, p.n, p.pieceLen = job, n, pieceLen
	p.done.Store(0)
	gen := p.state.Load()>>32 + 1
	p.state.Store(gen<<32 | uint64(pieces)<<16)
	p.wakeAll()
	p.claim(gen)
	for i := 0; p.done.Load() != int64(pieces); i++ {
		if i > spinRounds {
			runtime.Gosched() // a worker holding a piece was descheduled
		}
	}
	p.job = nil
}

// grain returns how many output rows make a chunk worth sharing when each
// row costs perRow multiply-adds.
func grain(perRow int) int { return max(1, minChunkMACs/max(perRow, 1)) }

// rowBlock is the number of weight rows in a piece's unit: a multiple of
// every kernel's block (8 for the AVX-512 prefill of float32 weights), so
// that pieces of a product cut no block.
const rowBlock = 8

// matMulJob splits weight rows in blocks of rowBlock: indices are block
// numbers.
type matMulJob struct {
	dst, x []float32
	w      Matrix
	n      int
	warm   [][]float32 // memory to warm during a decode (Product.Warm)
}

func (j *matMulJob) Run(lo, hi int) {
	lo, hi = min(lo*rowBlock, j.w.Rows), min(hi*rowBlock, j.w.Rows)
	if !warms(j.warm, j.n) {
		matMulRows(j.dst, j.w, j.x, j.n, lo, hi, nil)
		return
	}
	var s sideLines
	matMulRows(j.dst, j.w, j.x, j.n, lo, hi, s.share(j.warm, lo, hi, j.w.Rows))
}

// matMulsJob is the products of one MatMuls call (at most maxJoined, none
// rounding its activations) as one job, so that they share one hand-off
// and one wait: indices run through the products' blocks of rowBlock rows
// in turn, first[i] being product i's first.
type matMulsJob struct {
	x     []float32
	n     int
	prods [maxJoined]Product
	first [maxJoined + 1]int
}

// maxJoined is the most products MatMuls hands to the pool as one job (q,
// k and v; gate and up).
const maxJoined = 4

func (j *matMulsJob) Run(lo, hi int) {
	for i := range j.prods {
		a, b := max(lo, j.first[i]), min(hi, j.first[i+1])
		if a < b {
			pr := &j.prods[i]
			job := matMulJob{dst: pr.Dst, x: j.x, w: pr.W, n: j.n, warm: pr.Warm}
			job.Run(a-j.first[i], b-j.first[i])
		}
	}
}

// warms reports whether a product with n rows of x takes warm: a decode
// (one row) with the AVX-512 kernels and something to warm.
func warms(warm [][]float32, n int) bool { return n == 1 && len(warm) > 0 && useAVX512 }

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
func (p *Pool) MatMul(dst []float32, w Matrix, x []float32) { p.matMul(dst, w, x, nil) }

// matMul is MatMul warming warm as it goes (Product.Warm).
func (p *Pool) matMul(dst []float32, w Matrix, x []float32, warm [][]float32) {
	n := checkMatMul("MatMul", dst, w.Rows, w.Cols, x)
	if w.needsRounding() {
		p.matMulRound(dst, w, x, n)
		return
	}
	job := matMulJob{dst: dst, x: x, w: w, n: n, warm: warm}
	if p == nil {
		job.Run(0, (w.Rows+rowBlock-1)/rowBlock)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mm = job
	p.parallel((w.Rows+rowBlock-1)/rowBlock, grain(rowBlock*w.Cols*n), &p.mm)
	p.mm = matMulJob{}
}

// MatVec is MatVec split over the pool by weight rows.
func (p *Pool) MatVec(dst []float32, w Matrix, x []float32) { p.MatMul(dst, w, x) }

// MatMulT is MatMulT split over the pool by output columns.
func (p *Pool) MatMulT(dst []float32, w Matrix, x []float32) {
	checkMatMulT(w)
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
