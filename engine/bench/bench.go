package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"tracer/engine"
	"tracer/engine/tensor"
)

// Options configure a Run. Zero fields take the defaults in brackets.
type Options struct {
	Threads   int  // goroutines the model's kernels run on [GOMAXPROCS]
	PromptLen int  // prompt tokens, fed in one prefill step [64]
	NewTokens int  // tokens generated per repetition [128]
	Reps      int  // repetitions [3]
	Record    bool // also generate with recording on and report the cost

	// RecordAttention ("step" or "all") and RecordLens (top ids per
	// layer) add the inside of the model to the recorded runs; either
	// implies Record.
	RecordAttention string
	RecordLens      int
	RecordForward   int // heads and MLP neurons kept per layer when the forward pass is recorded (0: not); implies Record

	ProbeBytes int64  // bandwidth probe array [max(4·L3, 512 MiB)]
	ProbeReps  int    // passes per bandwidth measurement [10]
	FMARounds  int    // rounds of the FMA kernel per thread [20 000 000, about 0.1 s]
	Seed       uint64 // of the prompt's token ids and of sampling

	// Peer, when set, is another engine measured on the same prompt right
	// after each of tracer's greedy repetitions (interleaved, so that the
	// machine's drift falls on both alike, after one untimed warm-up);
	// Report.Peer holds its rates and tracer's over them.
	Peer Peer

	Log io.Writer // progress lines; nil: none
}

// A Peer is another inference engine that Run measures beside tracer: on
// the same weights, prompt and number of new tokens, greedy, each engine
// timing itself.
type Peer interface {
	// Name says what it is, e.g. "llama-server b4748-c392e509".
	Name() string
	// Generate feeds prompt in one prefill and then generates newTokens
	// tokens greedily, whatever they are (no end of sequence), and
	// returns its own prefill and decode rates in tokens/s.
	Generate(ctx context.Context, prompt []int, newTokens int) (prefill, decode float64, err error)
}

// PeerReport is a peer engine's rates beside tracer's (Options.Peer).
type PeerReport struct {
	Name                string `json:"name"`
	PrefillTokensPerSec Stat   `json:"prefill_tokens_per_sec"`
	DecodeTokensPerSec  Stat   `json:"decode_tokens_per_sec"`
	// PrefillRatio and DecodeRatio are tracer's rate over the peer's, one
	// ratio a repetition (tracer's run and the peer's right after it):
	// above 1, tracer is faster.
	PrefillRatio Stat `json:"prefill_ratio"`
	DecodeRatio  Stat `json:"decode_ratio"`
}

func (o *Options) defaults() {
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.PromptLen <= 0 {
		o.PromptLen = 64
	}
	if o.NewTokens <= 0 {
		o.NewTokens = 128
	}
	if o.Reps <= 0 {
		o.Reps = 3
	}
	if o.ProbeBytes <= 0 {
		o.ProbeBytes = DefaultProbeBytes()
	}
	if o.ProbeReps <= 0 {
		o.ProbeReps = DefaultProbeReps
	}
	if o.FMARounds <= 0 {
		o.FMARounds = 20_000_000
	}
}

// Stat is a measurement over the repetitions.
type Stat struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func statOf(v []float64) Stat {
	if len(v) == 0 {
		return Stat{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Stat{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

// Report is the result of a Run. Speeds are tokens per second, bandwidths
// GB/s (1e9 bytes), FLOP rates GFLOP/s.
type Report struct {
	Model           string `json:"model"`
	Architecture    string `json:"architecture"`
	DType           string `json:"dtype"`
	Params          int64  `json:"params"`
	WeightBytes     int64  `json:"weight_bytes"`
	KVBytesPerToken int64  `json:"kv_bytes_per_token"`
	Kernels         string `json:"kernels"` // the matrix kernels in use (tensor.KernelName)
	Threads         int    `json:"threads"`
	PromptLen       int    `json:"prompt_len"`
	NewTokens       int    `json:"new_tokens"`
	Reps            int    `json:"reps"`

	// WeightTypes are the weights' bytes by type where the model says (a
	// GGUF file's: "q4_k", its fallback "q5_0", the head's "q8_0", the
	// norms' "f32").
	WeightTypes map[string]int64 `json:"weight_types,omitempty"`

	// Prefill is the first forward pass, the whole prompt at once.
	PrefillTokensPerSec Stat    `json:"prefill_tokens_per_sec"`
	PrefillGFLOPS       Stat    `json:"prefill_gflops"`
	PrefillFMAFraction  float64 `json:"prefill_fma_fraction"` // best prefill GFLOP/s over the FMA peak at Threads (the best before and after)

	// Decode is every later step of engine.Generate, greedy, recording
	// off: one forward pass and the choice of a token.
	DecodeTokensPerSec Stat  `json:"decode_tokens_per_sec"`
	BytesPerToken      int64 `json:"bytes_per_token"` // read per decode step: weights at their dtype, the whole head, the KV cache (mean over the steps)
	DecodeGBps         Stat  `json:"decode_gbps"`     // BytesPerToken × decode tokens/s

	// The read bandwidth right before and after the timed runs and between
	// repetitions, with one thread and with Threads; the limit is the best
	// at Threads. A machine shared with others (a VM) moves its bandwidth
	// by several percent within a minute: probed only before and after, a
	// repetition could find more than either and decode above "the limit".
	BandwidthBefore    []Bandwidth `json:"bandwidth_before"`
	BandwidthBetween   []Bandwidth `json:"bandwidth_between"`
	BandwidthAfter     []Bandwidth `json:"bandwidth_after"`
	BandwidthLimitGBps float64     `json:"bandwidth_limit_gbps"`
	BandwidthFraction  float64     `json:"bandwidth_fraction"`        // best decode GB/s over the limit
	MedianFraction     float64     `json:"bandwidth_fraction_median"` // median decode GB/s over the limit
	// PairedFraction is each repetition's decode GB/s over the better of
	// the two probes around it (at Threads): how near the engine came to
	// what the machine gave at that moment, the drift between repetitions
	// left out.
	PairedFraction Stat `json:"bandwidth_fraction_paired"`
	// The FMA peak right before and after the timed runs, with one thread
	// and with Threads: a peak taken once could be held down by a moment
	// when the machine ran something else.
	FMA            []FMAPeak `json:"fma_peak"`
	FMAAfter       []FMAPeak `json:"fma_peak_after"`
	ProbeBytes     int64     `json:"probe_bytes"`
	ProbeReps      int       `json:"probe_reps"`            // passes per bandwidth measurement, the best kept
	ProbeHugeBytes int64     `json:"probe_huge_page_bytes"` // of the probe array, in transparent huge pages (-1: unknown)
	ProbeISA       string    `json:"probe_isa"`

	AllocsPerToken float64 `json:"allocs_per_token"` // heap allocations per decode step, recording off (-1: unknown, fewer than 3 new tokens)
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`   // of the timed runs (-1: unknown)

	// Record compares decoding with recording on and off, same options.
	Record *RecordReport `json:"record,omitempty"`

	// Peer is another engine's rates on the same runs (Options.Peer).
	Peer *PeerReport `json:"peer,omitempty"`
}

// RecordReport is the cost of recording every step: decoding with the
// sampling pipeline, recording off and on in turn.
type RecordReport struct {
	Generation      string `json:"generation"`          // the options of both runs
	Top             int    `json:"top"`                 // candidates per list
	Attention       string `json:"attention,omitempty"` // record_attention of the recorded runs: "step" or "all"
	Lens            int    `json:"lens,omitempty"`      // record_lens of the recorded runs
	Forward         int    `json:"forward,omitempty"`   // record_forward of the recorded runs
	OffTokensPerSec Stat   `json:"off_decode_tokens_per_sec"`
	OnTokensPerSec  Stat   `json:"on_decode_tokens_per_sec"`
	// Ratio is the median over repetitions of one repetition's decode time
	// per token with recording on over the one with it off, each the sum of
	// two runs in the order off, on, on, off (on, off, off, on at the next
	// repetition): balanced, so that the machine's drift over the four (its
	// memory bandwidth moves by several percent within a minute) and a
	// run's place in the repetition cancel out.
	Ratio float64 `json:"ratio"`
	// OutsideOffUS and OutsideOnUS are the mean time per decoded token
	// spent outside the model's forward pass (sampling, and with
	// recording on the recording too), in µs: their difference is
	// recording's own work, without the machine's drift that moves the
	// forward pass, and so Ratio, by a few percent.
	OutsideOffUS float64 `json:"outside_forward_off_us"`
	OutsideOnUS  float64 `json:"outside_forward_on_us"`
}

// Run measures m: the bandwidth and FMA probes, a warm-up, opts.Reps timed
// greedy generations of opts.NewTokens tokens after a prompt of
// opts.PromptLen random ids, and the bandwidth probe again. With
// opts.Record each repetition also generates with the sampling pipeline
// (repetition penalty 1.1, temperature 0.8, top-k 50, top-p 0.95: four
// stages) with recording off and on, twice each (see RecordReport.Ratio;
// the top 20 of every stage, the final distribution, KV cache and
// traffic). EOS is ignored, so
// every run generates all its tokens. When m has a SetThreads(int) method
// (an *arch.Model) it is set to opts.Threads.
func Run(ctx context.Context, m engine.Model, opts Options) (*Report, error) {
	opts.defaults()
	if opts.RecordAttention != "" || opts.RecordLens != 0 || opts.RecordForward != 0 {
		opts.Record = true
		if _, ok := m.(engine.InsideModel); !ok {
			return nil, fmt.Errorf("bench: model %q cannot record attention, the logit lens or the forward pass", m.Info().Name)
		}
	}
	if t, ok := m.(interface{ SetThreads(int) }); ok {
		t.SetThreads(opts.Threads)
	}
	info := m.Info()
	if info.MaxPositions > 0 && opts.PromptLen+opts.NewTokens > info.MaxPositions {
		return nil, fmt.Errorf("bench: %d prompt + %d new tokens exceed the model's %d positions", opts.PromptLen, opts.NewTokens, info.MaxPositions)
	}
	r := &Report{
		Model: info.Name, Architecture: info.Architecture, DType: info.DType, Params: info.Params,
		WeightBytes: info.WeightBytes, WeightTypes: info.WeightTypes, KVBytesPerToken: info.KVBytesPerToken, Kernels: tensor.KernelName(),
		Threads: opts.Threads, PromptLen: opts.PromptLen, NewTokens: opts.NewTokens, Reps: opts.Reps,
		ProbeBytes: opts.ProbeBytes / 256 * 256, ProbeReps: opts.ProbeReps, ProbeISA: vectorISA(),
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}

	logf("probing read bandwidth (%d MiB) and the FMA peak", r.ProbeBytes>>20)
	var err error
	if r.BandwidthBefore, r.ProbeHugeBytes, err = ProbeBandwidth(r.ProbeBytes, opts.Threads, opts.ProbeReps); err != nil {
		return nil, err
	}
	r.FMA = measureFMAPeaks(opts)
	runtime.GC()
	peakOK := ResetPeakRSS()

	off, err := newRequest(m, opts, false)
	if err != nil {
		return nil, err
	}
	var sampleOff, sampleOn engine.Request
	if opts.Record {
		if sampleOff, err = newRequest(m, opts, true); err != nil {
			return nil, err
		}
		sampleOn = sampleOff
		sampleOn.Record = true
		sampleOn.Options.RecordAttention, sampleOn.Options.RecordLens = opts.RecordAttention, opts.RecordLens
		sampleOn.Options.RecordForward = opts.RecordForward
	}
	logf("warming up")
	warm := off
	warm.Options.MaxNewTokens = 2
	if _, err := generate(ctx, warm); err != nil {
		return nil, err
	}

	var prefill, prefillFLOPs, decode, decodeOff, decodeOn, ratios, outsideOff, outsideOn []float64
	var peerPrefill, peerDecode, prefillRatios, decodeRatios []float64
	var fewest uint64 // heap allocations of the leanest full run
	flops := float64(m.Cost(1, 0, opts.PromptLen).FLOPs)
	if opts.Peer != nil {
		logf("warming up %s", opts.Peer.Name())
		if _, _, err := opts.Peer.Generate(ctx, off.Prompts[0], opts.NewTokens); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", opts.Peer.Name(), err)
		}
	}
	for rep := 0; rep < opts.Reps; rep++ {
		logf("repetition %d of %d", rep+1, opts.Reps)
		t, err := generate(ctx, off)
		if err != nil {
			return nil, err
		}
		if rep == 0 || t.mallocs < fewest {
			fewest = t.mallocs
		}
		prefill = append(prefill, float64(opts.PromptLen)/t.prefill.Seconds())
		prefillFLOPs = append(prefillFLOPs, flops/t.prefill.Seconds()/1e9)
		decode = append(decode, float64(t.steps)/t.decode.Seconds())
		if opts.Peer != nil {
			p, d, err := opts.Peer.Generate(ctx, off.Prompts[0], opts.NewTokens)
			if err != nil {
				return nil, fmt.Errorf("bench: %s: %w", opts.Peer.Name(), err)
			}
			peerPrefill, peerDecode = append(peerPrefill, p), append(peerDecode, d)
			prefillRatios, decodeRatios = append(prefillRatios, prefill[rep]/p), append(decodeRatios, decode[rep]/d)
		}
		if opts.Record {
			// Off, on, on, off (on, off, off, on at the next repetition):
			// a drift of the machine over the four cancels out, and so does
			// the first run's place right after the greedy one (about 1 ms
			// a token slower on a 2-core VM, whichever it is).
			order := []*engine.Request{&sampleOff, &sampleOn, &sampleOn, &sampleOff}
			if rep%2 == 1 {
				order = []*engine.Request{&sampleOn, &sampleOff, &sampleOff, &sampleOn}
			}
			var on, off time.Duration // per token, summed over the two of each
			for _, req := range order {
				t, err := generate(ctx, *req)
				if err != nil {
					return nil, err
				}
				rate := float64(t.steps) / t.decode.Seconds()
				perToken := t.decode / time.Duration(max(t.steps, 1))
				outside := (t.decode - t.forward).Seconds() * 1e6 / float64(max(t.steps, 1))
				if req.Record {
					decodeOn, on, outsideOn = append(decodeOn, rate), on+perToken, append(outsideOn, outside)
				} else {
					decodeOff, off, outsideOff = append(decodeOff, rate), off+perToken, append(outsideOff, outside)
				}
			}
			ratios = append(ratios, on.Seconds()/off.Seconds())
		}
		if rep < opts.Reps-1 {
			b, _, err := ProbeBandwidth(r.ProbeBytes, opts.Threads, opts.ProbeReps)
			if err != nil {
				return nil, err
			}
			r.BandwidthBetween = append(r.BandwidthBetween, b...)
		}
	}
	r.PeakRSSBytes = -1
	if peakOK {
		r.PeakRSSBytes = PeakRSSBytes()
	}
	// The same run for 2 tokens: the difference is what the other steps
	// allocated (the count is the whole process's, so the leanest run is
	// taken).
	var shortest uint64
	for i := range 2 {
		short, err := generate(ctx, warm)
		if err != nil {
			return nil, err
		}
		if i == 0 || short.mallocs < shortest {
			shortest = short.mallocs
		}
	}
	// Another goroutine's allocation can make the difference negative:
	// that is noise, and counts as none.
	// With 2 new tokens the runs are the same: nothing to count (and 0/0
	// is a NaN, which JSON cannot carry).
	r.AllocsPerToken = -1
	if opts.NewTokens > 2 {
		r.AllocsPerToken = max(0, float64(fewest)-float64(shortest)) / float64(opts.NewTokens-2)
	}

	logf("probing read bandwidth and the FMA peak again")
	if r.BandwidthAfter, _, err = ProbeBandwidth(r.ProbeBytes, opts.Threads, opts.ProbeReps); err != nil {
		return nil, err
	}
	r.FMAAfter = measureFMAPeaks(opts)

	r.PrefillTokensPerSec, r.PrefillGFLOPS = statOf(prefill), statOf(prefillFLOPs)
	r.DecodeTokensPerSec = statOf(decode)
	var bytes int64
	for past := opts.PromptLen; past < opts.PromptLen+opts.NewTokens-1; past++ {
		c := m.Cost(1, past, 1)
		bytes += c.WeightBytes + c.KVReadBytes
	}
	r.BytesPerToken = bytes / int64(max(opts.NewTokens-1, 1))
	perGB := float64(r.BytesPerToken) / 1e9
	d := r.DecodeTokensPerSec
	r.DecodeGBps = Stat{Min: d.Min * perGB, Median: d.Median * perGB, Max: d.Max * perGB}
	probes := slices.Concat(r.BandwidthBefore, r.BandwidthBetween, r.BandwidthAfter) // in the order they ran
	for _, b := range probes {
		if b.Threads == opts.Threads {
			r.BandwidthLimitGBps = max(r.BandwidthLimitGBps, b.BestGBps)
		}
	}
	if r.BandwidthLimitGBps > 0 {
		r.BandwidthFraction = r.DecodeGBps.Max / r.BandwidthLimitGBps
		r.MedianFraction = r.DecodeGBps.Median / r.BandwidthLimitGBps
	}
	r.PairedFraction = pairedFraction(decode, perGB, opts.Threads, probes)
	if peak := r.fmaPeak(opts.Threads); peak > 0 {
		r.PrefillFMAFraction = r.PrefillGFLOPS.Max / peak
	}
	if opts.Peer != nil {
		r.Peer = &PeerReport{
			Name:                opts.Peer.Name(),
			PrefillTokensPerSec: statOf(peerPrefill), DecodeTokensPerSec: statOf(peerDecode),
			PrefillRatio: statOf(prefillRatios), DecodeRatio: statOf(decodeRatios),
		}
	}
	if opts.Record {
		r.Record = &RecordReport{
			Top: sampleOn.Options.RecordTop, Generation: "sample: repetition_penalty 1.1, temperature 0.8, top_k 50, top_p 0.95",
			Attention: opts.RecordAttention, Lens: opts.RecordLens, Forward: opts.RecordForward,
			OffTokensPerSec: statOf(decodeOff), OnTokensPerSec: statOf(decodeOn),
		}
		r.Record.Ratio = statOf(ratios).Median
		r.Record.OutsideOffUS, r.Record.OutsideOnUS = mean(outsideOff), mean(outsideOn)
	}
	return r, nil
}

// pairedFraction is Report.PairedFraction: decode holds each repetition's
// tokens/s, perGB the GB a token reads, probes the probes in the order
// they ran (before, one between each two repetitions, after), of which
// those at threads bracket the repetitions.
func pairedFraction(decode []float64, perGB float64, threads int, probes []Bandwidth) Stat {
	var at []float64
	for _, b := range probes {
		if b.Threads == threads {
			at = append(at, b.BestGBps)
		}
	}
	var f []float64
	for i, d := range decode {
		if i+1 < len(at) && max(at[i], at[i+1]) > 0 {
			f = append(f, d*perGB/max(at[i], at[i+1]))
		}
	}
	return statOf(f)
}

// mean is the mean of v (0 when empty).
func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}

// measureFMAPeaks measures the FMA peak with one thread and, when more
// are asked for, with opts.Threads.
func measureFMAPeaks(opts Options) []FMAPeak {
	peaks := []FMAPeak{MeasureFMA(1, 3, opts.FMARounds)}
	if opts.Threads > 1 {
		peaks = append(peaks, MeasureFMA(opts.Threads, 3, opts.FMARounds))
	}
	return peaks
}

// fmaPeak returns the best FMA peak measured with threads threads,
// before or after the timed runs (0 when none was).
func (r *Report) fmaPeak(threads int) float64 {
	best := 0.0
	for _, f := range append(slices.Clone(r.FMA), r.FMAAfter...) {
		if f.Threads == threads {
			best = max(best, f.BestGFLOPS)
		}
	}
	return best
}

// ProbeBandwidth is the machine's one bandwidth probe, used by tracer bench
// and by the server's traffic panel alike. It allocates the probe array
// (huge pages where possible), writes it from every thread as membw.c
// does (an array never written maps to the kernel's shared zero page and
// reads several times faster than memory), and measures the read
// bandwidth with one thread and, when threads > 1, with threads. It frees
// the array and also returns the bytes the array had in huge pages.
func ProbeBandwidth(bytes int64, threads, reps int) ([]Bandwidth, int64, error) {
	a, free, err := allocFloats(int(bytes / 4))
	if err != nil {
		return nil, 0, fmt.Errorf("bench: probe array of %d bytes: %w", bytes, err)
	}
	defer free()
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := a[len(a)*t/threads : len(a)*(t+1)/threads]
			for i := range part {
				part[i] = 1 + float32(i&7)*1e-3
			}
		}()
	}
	wg.Wait()
	huge := anonHugeBytes()
	out := []Bandwidth{MeasureRead(a, 1, reps)}
	if threads > 1 {
		out = append(out, MeasureRead(a, threads, reps))
	}
	return out, huge, nil
}

// newRequest builds the generation request of the timed runs: a prompt of
// random ids, no EOS, greedy or (sample) the sampling pipeline.
func newRequest(m engine.Model, opts Options, sample bool) (engine.Request, error) {
	info := m.Info()
	maxNew := opts.NewTokens
	user := &engine.Settings{MaxNewTokens: &maxNew, EOSTokenID: []int{}, Seed: &opts.Seed}
	if sample {
		doSample, rep, temp, topK, topP := true, 1.1, 0.8, 50, 0.95
		user.DoSample, user.RepetitionPenalty, user.Temperature, user.TopK, user.TopP = &doSample, &rep, &temp, &topK, &topP
	}
	o, notices, err := engine.Resolve(info, nil, user)
	if err != nil {
		return engine.Request{}, fmt.Errorf("bench: %w", err)
	}
	prompt := make([]int, opts.PromptLen)
	x := opts.Seed*0x9e3779b97f4a7c15 + 1
	for i := range prompt {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		prompt[i] = int(x % uint64(info.VocabSize))
	}
	return engine.Request{Model: m, Prompts: [][]int{prompt}, Options: o, Notices: notices}, nil
}

// timing is what one generation measured.
type timing struct {
	prefill time.Duration // the first forward pass
	decode  time.Duration // from its end to the end of the last one
	steps   int           // forward passes after the first
	forward time.Duration // of decode spent in Forward
	mallocs uint64        // heap allocations of the whole engine.Generate call
	firstAt time.Time     // when the first forward pass ended
}

// generate runs req through engine.Generate with its model wrapped in a
// stopwatch.
func generate(ctx context.Context, req engine.Request) (timing, error) {
	tm := &timedModel{Model: req.Model}
	req.Model = tm
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := engine.Generate(ctx, req)
	runtime.ReadMemStats(&after)
	if err != nil {
		return timing{}, fmt.Errorf("bench: %w", err)
	}
	if tm.calls == 0 {
		return timing{}, errors.New("bench: the model was never run")
	}
	return timing{
		prefill: tm.prefillEnd.Sub(tm.start), decode: tm.lastEnd.Sub(tm.prefillEnd),
		steps: tm.calls - 1, mallocs: after.Mallocs - before.Mallocs, forward: tm.forward, firstAt: tm.prefillEnd,
	}, nil
}

// timedModel times the Forward calls of the model it wraps.
type timedModel struct {
	engine.Model
	calls                      int
	start, prefillEnd, lastEnd time.Time
	forward                    time.Duration // inside the decode steps' Forward calls
}

func (t *timedModel) Forward(c engine.Cache, b *engine.Batch, logits [][]float32) error {
	return t.time(func() error { return t.Model.Forward(c, b, logits) })
}

// ForwardInside times the wrapped model's ForwardInside, so that recording
// the inside of the model is measured like any other forward pass.
func (t *timedModel) ForwardInside(c engine.Cache, b *engine.Batch, logits [][]float32, in *engine.Inside) error {
	im, ok := t.Model.(engine.InsideModel)
	if !ok {
		return fmt.Errorf("bench: model %q cannot look inside its forward pass", t.Model.Info().Name)
	}
	return t.time(func() error { return im.ForwardInside(c, b, logits, in) })
}

// time runs one forward pass and adds it to the timings.
func (t *timedModel) time(forward func() error) error {
	if t.calls == 0 {
		t.start = time.Now()
	}
	begin := time.Now()
	err := forward()
	t.lastEnd = time.Now()
	if t.calls == 0 {
		t.prefillEnd = t.lastEnd
	} else {
		t.forward += t.lastEnd.Sub(begin)
	}
	t.calls++
	return err
}
