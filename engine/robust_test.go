package engine

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"tracer/trace"
)

// fixedModel returns the same logits for every row at every step. It does
// not implement NaNFinder, so a NaN in its logits is reported as "logits".
type fixedModel struct{ logits []float32 }

func (m *fixedModel) Info() Info {
	return Info{Name: "fixed", Kind: "toy", Architecture: "fixed", VocabSize: len(m.logits), BOS: -1, PAD: -1, EOS: []int{}}
}
func (m *fixedModel) NewCache(rows, _ int) (Cache, error) { return &fixedCache{rows: rows}, nil }
func (m *fixedModel) Forward(c Cache, b *Batch, logits [][]float32) error {
	fc := c.(*fixedCache)
	fc.n += len(b.Tokens[0])
	for _, l := range logits {
		copy(l, m.logits)
	}
	return nil
}
func (m *fixedModel) Cost(int, int, int) trace.Traffic { return trace.Traffic{} }

type fixedCache struct{ rows, n int }

func (c *fixedCache) Len() int            { return c.n }
func (c *fixedCache) Rows() int           { return c.rows }
func (c *fixedCache) LayerBytes() []int64 { return nil }
func (c *fixedCache) Reorder([]int)       {}
func (c *fixedCache) Truncate(n int)      { c.n = n }
func (c *fixedCache) Clone() Cache        { d := *c; return &d }

// run generates from the fixed logits with the user's settings, recording.
func run(t testing.TB, logits []float32, user *Settings) (*trace.Trace, error) {
	m := &fixedModel{logits: logits}
	o, notices, err := Resolve(m.Info(), nil, user)
	if err != nil {
		return nil, err
	}
	return Generate(context.Background(), Request{Model: m, Prompts: [][]int{{0, 1}}, Options: o, Notices: notices, Record: true})
}

// TestSamplingInTheLimit covers settings that used to overflow to ±Inf and
// NaN and panic in the pick (index -1): a temperature tending to 0 samples
// greedily, a penalty tending to 0 keeps a valid distribution.
func TestSamplingInTheLimit(t *testing.T) {
	logits := []float32{0.5, -1, 2.25, 2, -3, 0, 1}
	const argmax = 2
	for _, tc := range []struct {
		name   string
		user   Settings
		greedy bool // every step must choose argmax with probability 1
	}{
		{"temperature 1e-45", Settings{Temperature: ptr(1e-45)}, true},
		{"temperature 1e-300", Settings{Temperature: ptr(1e-300)}, true},
		{"temperature 5e-324", Settings{Temperature: ptr(5e-324)}, true},
		{"temperature 1e-38 with top-p and min-p", Settings{Temperature: ptr(1e-38), TopP: ptr(0.5), MinP: ptr(0.1)}, true},
		{"temperature 1e30", Settings{Temperature: ptr(1e30)}, false},
		{"temperature 1e39 (float32 +Inf)", Settings{Temperature: ptr(1e39)}, false},
		{"repetition penalty 1e-300", Settings{RepetitionPenalty: ptr(1e-300)}, false},
		{"repetition penalty 1e-40", Settings{RepetitionPenalty: ptr(1e-40)}, false},
		{"repetition penalty 1e300", Settings{RepetitionPenalty: ptr(1e300)}, false},
		{"penalty 1e-300 and temperature 1e-300", Settings{RepetitionPenalty: ptr(1e-300), Temperature: ptr(1e-300)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.user
			u.DoSample, u.MaxNewTokens, u.TopK = ptr(true), ptr(5), ptr(0)
			tr, err := run(t, logits, &u)
			if err != nil {
				t.Fatalf("got error %v, want a run", err)
			}
			if tr.Output.StopReason != trace.StopMaxNewTokens {
				t.Fatalf("got stop reason %q (notices %q), want %q", tr.Output.StopReason, tr.Notices, trace.StopMaxNewTokens)
			}
			for _, st := range tr.Steps {
				c := st.Rows[0].Chosen
				if c.ID < 0 || c.ID >= len(logits) || !(c.Prob > 0 && c.Prob <= 1) {
					t.Errorf("step %d chose %d with probability %v, want a token of the vocabulary with a probability in (0, 1]", st.Index, c.ID, c.Prob)
				}
				if tc.greedy && (c.ID != argmax || c.Prob != 1) {
					t.Errorf("step %d chose %d with probability %v, want the argmax %d with probability 1 (the limit is greedy)", st.Index, c.ID, c.Prob, argmax)
				}
			}
			if err := trace.Write(&bytes.Buffer{}, tr); err != nil {
				t.Errorf("trace.Write: %v", err)
			}
		})
	}
}

// TestNaNLogitsStop: logits holding a NaN or +Inf, or nothing but -Inf,
// stop the run with stop reason nan in greedy decoding, sampling and beam
// search, and the trace still writes as JSON.
func TestNaNLogitsStop(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tc := range []struct {
		name   string
		logits []float32
		where  string
	}{
		{"NaN", []float32{1, nan, 0, 2}, trace.NaNLogits},
		{"+Inf", []float32{1, inf, 0, 2}, trace.NaNLogits},
		{"all NaN", []float32{nan, nan, nan, nan}, trace.NaNLogits},
		{"all -Inf", []float32{-inf, -inf, -inf, -inf}, trace.NaNNoMass},
	} {
		for mode, user := range map[string]Settings{
			"greedy": {MaxNewTokens: ptr(3)},
			"sample": {MaxNewTokens: ptr(3), DoSample: ptr(true), Temperature: ptr(1e-45)},
			"beam":   {MaxNewTokens: ptr(3), NumBeams: ptr(2)},
		} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				tr, err := run(t, tc.logits, &user)
				if err != nil {
					t.Fatalf("got error %v, want a run that stops with nan", err)
				}
				if tr.Output.StopReason != trace.StopNaN || tr.Output.NaN == nil || tr.Output.NaN.Where != tc.where || tr.Output.NaN.Step != 0 {
					t.Fatalf("got stop %q, nan %+v, want stop nan at step 0 where %q", tr.Output.StopReason, tr.Output.NaN, tc.where)
				}
				if len(tr.Steps) != 0 || len(tr.Output.NewIDs) != 0 {
					t.Errorf("got %d steps and new ids %v, want none: the NaN step chooses nothing", len(tr.Steps), tr.Output.NewIDs)
				}
				if err := trace.Write(&bytes.Buffer{}, tr); err != nil {
					t.Errorf("trace.Write: %v", err)
				}
			})
		}
	}
}

// TestTemperatureLimit checks the processor itself: finite scores, the top
// score at 0 and the others at -Inf or far below when T is tiny, and plain
// division (transformers' s/T) where that stays finite.
func TestTemperatureLimit(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name string
		s    []float32
		T    float64
		want []float32
	}{
		{"plain division", []float32{1, -2, 4}, 0.5, []float32{2, -4, 8}},
		{"removed stays removed", []float32{1, -inf, 4}, 2, []float32{0.5, -inf, 2}},
		{"tiny T shifts by the maximum", []float32{1, 3, 3, -inf}, 1e-45, []float32{-inf, 0, 0, -inf}},
		{"T rounds to 0 in float32", []float32{0, 0, -1}, 5e-324, []float32{0, 0, -inf}},
		{"huge scores, small T", []float32{3e38, -3e38, 1}, 1e-3, []float32{0, -inf, -inf}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := append([]float32(nil), tc.s...)
			(&Temperature{T: tc.T}).Apply(s, nil)
			for i := range s {
				if s[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", s, tc.want)
				}
			}
		})
	}
}

// TestRepetitionPenaltyLimit: a penalty float32 rounds to 0 or +Inf holds
// overflowing scores at ±MaxFloat32 and leaves 0 at 0 instead of NaN.
func TestRepetitionPenaltyLimit(t *testing.T) {
	const big = math.MaxFloat32
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name    string
		penalty float64
		s       []float32
		want    []float32
	}{
		{"penalty 1e-300 (float32 0)", 1e-300, []float32{2, -2, 0, -inf, 5}, []float32{big, 0, 0, -inf, 5}},
		{"penalty 1e300 (float32 +Inf)", 1e300, []float32{2, -2, 0, -inf, 5}, []float32{0, -big, 0, -inf, 5}},
		{"penalty 1e-40", 1e-40, []float32{1e30, -3, 0, 1, 5}, []float32{big, -3 * float32(1e-40), 0, big, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := append([]float32(nil), tc.s...)
			(&RepetitionPenalty{Penalty: tc.penalty}).Apply(s, []int{0, 1, 2, 3})
			for i := range s {
				if s[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", s, tc.want)
				}
			}
		})
	}
}

// TestPickWithoutMass: a distribution with no positive finite mass is
// refused (ok false), never an index out of range.
func TestPickWithoutMass(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tc := range []struct {
		name  string
		probs []float32
	}{
		{"all zero", []float32{0, 0, 0}},
		{"all NaN", []float32{nan, nan}},
		{"NaN and zero", []float32{0, nan, 0}},
		{"+Inf", []float32{0.5, inf}},
		{"negative", []float32{-1, 0}},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pk picker
			for _, u := range []float64{0, 0.5, math.Nextafter(1, 0)} {
				if id, _, _, ok := pk.pick(tc.probs, u); ok {
					t.Errorf("u=%v: got token %d, ok; want ok false", u, id)
				}
			}
		})
	}
}

// FuzzSampling drives the whole sampling pipeline (repetition penalty,
// temperature from 5e-324 to 1e30, top-k, top-p, min-p) on logits holding
// 0, subnormals, NaN and ±Inf. The run never panics and ends with a clean
// option error, a nan stop, or valid tokens whose final probabilities are
// finite and sum to 1 within tolerance.
func FuzzSampling(f *testing.F) {
	f.Add(uint64(1), 1.0, 0.9, 0.0, 1.0, uint8(0), uint16(50), uint8(0))
	f.Add(uint64(2), 1e-45, 1.0, 0.0, 1.0, uint8(50), uint16(8), uint8(1))
	f.Add(uint64(3), 5e-324, 0.5, 0.1, 1e-300, uint8(3), uint16(300), uint8(2))
	f.Add(uint64(4), 1e30, 0.99, 0.5, 1e30, uint8(0), uint16(2), uint8(3))
	f.Add(uint64(5), 0.7, 0.2, 0.0, 1.3, uint8(10), uint16(1000), uint8(4))
	f.Fuzz(func(t *testing.T, seed uint64, temp, topP, minP, penalty float64, topK uint8, n uint16, kind uint8) {
		r := rand.New(rand.NewPCG(seed, 11))
		logits := make([]float32, 2+int(n)%1500)
		special := []float32{0, 1e-45, -1e-45, 1e-38, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32}
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 4)
			// kind sets how often a special value appears: never, rarely, often.
			if k := int(kind % 4); k > 0 && r.IntN(1<<(2*(3-k)+1)) == 0 {
				logits[i] = special[r.IntN(len(special))]
			}
		}
		user := &Settings{MaxNewTokens: ptr(3), DoSample: ptr(true), Temperature: &temp, TopP: &topP,
			MinP: &minP, RepetitionPenalty: &penalty, TopK: ptr(int(topK)), Seed: &seed}
		tr, err := run(t, logits, user)
		if err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("got error %v, want a run or an option error", err)
			}
			return
		}
		if err := trace.Write(&bytes.Buffer{}, tr); err != nil {
			t.Fatalf("trace.Write: %v", err)
		}
		switch tr.Output.StopReason {
		case trace.StopNaN:
			if tr.Output.NaN == nil {
				t.Fatal("stop reason nan without output.nan")
			}
		case trace.StopMaxNewTokens:
		default:
			t.Fatalf("got stop reason %q, want max_new_tokens or nan", tr.Output.StopReason)
		}
		for _, st := range tr.Steps {
			row := st.Rows[0]
			if c := row.Chosen; c.ID < 0 || c.ID >= len(logits) || !(c.Prob > 0 && c.Prob <= 1) {
				t.Fatalf("step %d chose %d with probability %v", st.Index, c.ID, c.Prob)
			}
			var sum float64
			for _, p := range row.Final.Probs {
				if !(p >= 0 && p <= 1) {
					t.Fatalf("step %d: final probability %v", st.Index, p)
				}
				sum += p
			}
			if row.Final.KeptCount <= len(row.Final.Probs) && math.Abs(sum-1) > 1e-4 {
				t.Fatalf("step %d: the %d kept probabilities sum to %v, want 1", st.Index, row.Final.KeptCount, sum)
			}
			if d := row.Draw; d == nil || !(d.CumBefore <= d.U && d.U < d.CumAfter || d.CumAfter == 1) {
				t.Fatalf("step %d: draw %+v does not hold u", st.Index, d)
			}
		}
	})
}
