package arch

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"tracer/engine"
	"tracer/engine/tensor"
)

// Runs share the weights. Every Forward call on a Model goes through its
// batcher: calls that arrive while a pass runs wait, and the next pass
// serves all of them at once (continuous batching, as serving engines do
// with their slots). The pass's tokens, every call's rows one after the
// other, go through each weight matrix together, so a decode step of 40
// runs reads the weights once instead of 40 times; attention runs per call
// on the call's own cache. A call joins and leaves between passes.
//
// Nothing a row computes depends on its neighbours: every product sums each
// dot product in the same order whatever the number of rows (see
// tensor.MatMul), the norms and activations work token by token, and
// attention is the call's own. So a run's logits are the same, bit for bit,
// alone or batched (TestBatchedEqualsAlone).
//
// A pass is driven by the goroutine of one of the calls it serves: the
// first call on an idle model drives, and a driver that finds calls
// waiting when its pass ends hands the next pass to the first of them, so
// no run's goroutine is kept working for others after its own step.

const (
	// maxBatchTokens bounds the tokens of a batched pass; a call feeding
	// more (a long prompt) runs alone, beside the batches, on its cache's
	// own buffers.
	maxBatchTokens = 512
	// maxBatchRows bounds the rows of a batched pass, and so the logits
	// its buffers hold (rows × vocabulary).
	maxBatchRows = 64
	// maxGather bounds how long a driver waits for the calls of the last
	// pass to come back (they sample and record between steps) before it
	// starts the next pass with the calls it has.
	maxGather = 20 * time.Millisecond
)

// batcher gathers a Model's Forward calls into passes, one pass at a time.
type batcher struct {
	mu      sync.Mutex
	queue   []*waiter     // calls waiting for a pass, first come first
	running bool          // a pass is running or being gathered
	expect  int           // calls the last pass served and calls waiting at its end: how many the next may gather
	took    time.Duration // how long the last pass took
	arrived chan struct{} // a call joined the queue (capacity 1)

	// Only the driver of the current pass touches these.
	calls   []*waiter // the calls it serves (takeLocked)
	s       scratch   // the batched pass's buffers
	p       pass      // the batched pass
	members []*pass   // its calls, in token order
}

// waiter is a Forward call waiting for a pass. Each cache has one: a
// cache serves one Forward call at a time.
type waiter struct {
	p      *pass
	logits [][]float32
	err    error
	wake   chan bool // true: drive the next pass; false: served (err set)
}

// batchNote is the pass a cache's last Forward call ran in.
type batchNote struct {
	calls, tokens int
}

func newBatcher() *batcher {
	return &batcher{arrived: make(chan struct{}, 1)}
}

// forward serves the call p (begun by Model.begin) in a pass, alone or
// with others, and writes its logits.
func (b *batcher) forward(m *Model, p *pass, logits [][]float32) error {
	if p.T() > maxBatchTokens || p.rows > maxBatchRows {
		m.forwardAlone(p, logits, nil)
		return nil
	}
	w := &p.c.wait
	if w.wake == nil {
		w.wake = make(chan bool, 1)
	}
	w.p, w.logits, w.err = p, logits, nil
	b.mu.Lock()
	b.queue = append(b.queue, w)
	select {
	case b.arrived <- struct{}{}:
	default:
	}
	if b.running {
		b.mu.Unlock()
		if drive := <-w.wake; !drive {
			return w.err
		}
		b.mu.Lock()
	}
	b.running = true // w is now the first in the queue
	b.gatherLocked()
	calls := b.takeLocked()
	b.mu.Unlock()

	start := time.Now()
	b.serve(m, calls)
	took := time.Since(start)
	for _, o := range calls[1:] {
		o.wake <- false
	}

	b.mu.Lock()
	// The calls served come back for their next step, and those that
	// queued meanwhile are waiting: the next pass waits for all of them.
	b.expect, b.took = min(len(calls)+len(b.queue), maxBatchRows), took
	if len(b.queue) > 0 {
		b.queue[0].wake <- true
	} else {
		b.running = false
	}
	b.mu.Unlock()
	return w.err
}

// gatherLocked waits, up to half the last pass's time (at most maxGather),
// until as many calls wait as the last pass served plus those that waited
// at its end, so that runs that fell a pass apart meet again: the runs of
// the last pass sample their tokens and come back; a run that ended does
// not, and the wait ends at the deadline. The caller holds b.mu; it is
// released while waiting.
func (b *batcher) gatherLocked() {
	if len(b.queue) >= b.expect {
		return
	}
	timer := time.NewTimer(min(b.took/2, maxGather))
	defer timer.Stop()
	for len(b.queue) < b.expect {
		b.mu.Unlock()
		select {
		case <-b.arrived:
			b.mu.Lock()
		case <-timer.C:
			b.mu.Lock()
			return
		}
	}
}

// takeLocked takes the calls of the next pass from the front of the queue,
// as many as fit in maxBatchTokens and maxBatchRows (the first always).
// The caller holds b.mu.
func (b *batcher) takeLocked() []*waiter {
	tokens, rows, k := 0, 0, 0
	for k < len(b.queue) {
		p := b.queue[k].p
		if k > 0 && (tokens+p.T() > maxBatchTokens || rows+p.rows > maxBatchRows) {
			break
		}
		tokens, rows, k = tokens+p.T(), rows+p.rows, k+1
	}
	b.calls = append(b.calls[:0], b.queue[:k]...)
	b.queue = append(b.queue[:0], b.queue[k:]...)
	return b.calls
}

// serve runs one pass for calls and sets each one's err. A call alone runs
// as Forward always did, on its cache's buffers; several run as one
// batched pass. A panic fails every call of the pass instead of leaving
// the others waiting.
func (b *batcher) serve(m *Model, calls []*waiter) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("arch: forward pass of %d calls failed: %v", len(calls), r)
			for _, w := range calls {
				w.err = err
			}
		}
	}()
	if len(calls) == 1 {
		m.forwardAlone(calls[0].p, calls[0].logits, nil)
		return
	}
	bp := b.begin(m, calls)
	m.run(bp, nil)
	out := m.lastLogits(bp)
	v, r := m.d.vocab, 0
	note := batchNote{calls: len(calls), tokens: bp.T()}
	for _, w := range calls {
		for _, l := range w.logits {
			copy(l, out[r*v:(r+1)*v])
			r++
		}
		w.p.c.n += w.p.n
		w.p.c.note = note
	}
}

// begin lays the calls' tokens one after the other in the batched pass.
func (b *batcher) begin(m *Model, calls []*waiter) *pass {
	b.members = b.members[:0]
	tokens, rows := 0, 0
	for _, w := range calls {
		w.p.t0 = tokens
		tokens, rows = tokens+w.p.T(), rows+w.p.rows
		b.members = append(b.members, w.p)
	}
	b.s.sizeBatch(m.d, tokens, rows)
	b.p = pass{m: m, s: &b.s, rows: rows, tokens: tokens, pool: m.pool, group: b.members}
	return &b.p
}

// LastBatch reports the pass the cache's last Forward call ran in: how many
// calls (runs) it served and how many tokens it fed, all calls together.
// It implements engine.BatchReporter.
func (c *Cache) LastBatch() (calls, tokens int) {
	return c.note.calls, c.note.tokens
}

var _ engine.BatchReporter = (*Cache)(nil)

// jobList runs several jobs as one: their units one after the other, each
// unit handed to the job it belongs to. A batched pass gives the pool one
// jobList for all its calls' attention instead of a job per call.
type jobList struct {
	jobs  []tensor.Job
	first []int // first[i]: the list's unit where job i starts; one more entry: the total
}

func (j *jobList) reset() {
	j.jobs, j.first = j.jobs[:0], append(j.first[:0], 0)
}

// add appends a job of units units.
func (j *jobList) add(job tensor.Job, units int) {
	j.jobs = append(j.jobs, job)
	j.first = append(j.first, j.first[len(j.first)-1]+units)
}

// units returns the units of all jobs together.
func (j *jobList) units() int { return j.first[len(j.first)-1] }

func (j *jobList) Run(lo, hi int) {
	i := sort.SearchInts(j.first[1:], lo+1) // the job holding unit lo
	for ; lo < hi; i++ {
		end := min(hi, j.first[i+1])
		if end > lo {
			j.jobs[i].Run(lo-j.first[i], end-j.first[i])
		}
		lo = end
	}
}
