package trace

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Floats in a trace are written as the shortest decimal that reads back to
// the same value at the precision the engine computed it in: float32
// values (logits, attention weights, beam scores, and the probabilities of
// the final distribution and of the chosen token, which come from a
// float32 softmax) as the shortest decimal that reads back to the same
// float32; float64 values (the candidates' probabilities, exp(logit - lse)
// in float64, entropy, the draw, scores) as the shortest that reads back to
// the same float64. Non-finite float32 values are written as null.

// appendFloat32 appends v as the shortest decimal that reads back to the
// same float32, or null when it is not finite.
func appendFloat32(b []byte, v float32) []byte {
	if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
}

// appendProb appends a probability held in a float64: as a float32 when it
// is one (it came from a float32 softmax), else as a float64. JSON has no
// NaN or infinity: such a probability is an error, as encoding/json makes
// it.
func appendProb(b []byte, p float64) ([]byte, error) {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return b, fmt.Errorf("trace: probability %v cannot be written: it is not a number", p)
	}
	if p32 := float32(p); float64(p32) == p {
		return appendFloat32(b, p32), nil
	}
	return strconv.AppendFloat(b, p, 'g', -1, 64), nil
}

// appendNorm appends a norm of a forward pass held in a float64 as
// appendProb does a probability: as a float32 when it is one (the engine
// computes norms at float32's precision), else as a float64; a norm that
// is not a number is an error.
func appendNorm(b []byte, v float64) ([]byte, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return b, fmt.Errorf("trace: norm %v cannot be written: it is not a number", v)
	}
	if v32 := float32(v); float64(v32) == v {
		return appendFloat32(b, v32), nil
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64), nil
}

// A forward pass is written by columns: each per-layer quantity as one
// array over the layers (attn, mid, mlp, out; heads and head_shares,
// neurons and neuron_acts, each an array per layer; attn_bytes,
// mlp_bytes), so a step at 30 layers names each field once instead of 30
// times. A layer's In is not written: it is the layer before's Out (layer
// 0's: the embedding), which reading fills in. The bytes arrays stop where
// the rest of the layers repeat their last entry: most models' layers read
// the same, so they hold one number.

// MarshalJSON writes the forward pass by columns (above), the norms at
// their precision (appendNorm).
func (f Forward) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 160+200*len(f.Layers)), `{"embedding":`...)
	b, err := appendNorm(b, f.Embedding)
	if err != nil {
		return nil, err
	}
	for i, name := range []string{"attn", "mid", "mlp", "out"} {
		b = append(append(append(b, `,"`...), name...), `":[`...)
		for l := range f.Layers {
			if l > 0 {
				b = append(b, ',')
			}
			fl := &f.Layers[l]
			if b, err = appendNorm(b, [...]float64{fl.Attn, fl.Mid, fl.MLP, fl.Out}[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = appendLists(append(b, `,"heads":`...), f.Layers, func(fl *ForwardLayer, b []byte) []byte {
		for k, h := range fl.Heads {
			b = strconv.AppendInt(comma(b, k), int64(h.Index), 10)
		}
		return b
	})
	b = appendLists(append(b, `,"head_shares":`...), f.Layers, func(fl *ForwardLayer, b []byte) []byte {
		for k, h := range fl.Heads {
			var bad error
			if b, bad = appendNorm(comma(b, k), h.Share); bad != nil && err == nil {
				err = fmt.Errorf("trace: head %d's share: %w", h.Index, bad)
			}
		}
		return b
	})
	if err != nil {
		return nil, err
	}
	b = appendLists(append(b, `,"neurons":`...), f.Layers, func(fl *ForwardLayer, b []byte) []byte {
		for k, n := range fl.Neurons {
			b = strconv.AppendInt(comma(b, k), int64(n.Index), 10)
		}
		return b
	})
	b = appendLists(append(b, `,"neuron_acts":`...), f.Layers, func(fl *ForwardLayer, b []byte) []byte {
		for k, n := range fl.Neurons {
			if n.Act != n.Act || math.IsInf(float64(n.Act), 0) {
				err = fmt.Errorf("trace: neuron %d's activation %v cannot be written: it is not a number", n.Index, n.Act)
			}
			b = appendFloat32(comma(b, k), n.Act)
		}
		return b
	})
	if err != nil {
		return nil, err
	}
	b = append(b, `,"final":`...)
	if b, err = appendNorm(b, f.Final); err != nil {
		return nil, err
	}
	b = strconv.AppendInt(append(b, `,"embed_bytes":`...), f.EmbedBytes, 10)
	b = strconv.AppendInt(append(b, `,"unembed_bytes":`...), f.UnembedBytes, 10)
	b = appendRepeatedTail(append(b, `,"attn_bytes":`...), f.Layers, func(l *ForwardLayer) int64 { return l.AttnBytes })
	b = appendRepeatedTail(append(b, `,"mlp_bytes":`...), f.Layers, func(l *ForwardLayer) int64 { return l.MLPBytes })
	return append(b, '}'), nil
}

// appendLists appends an array of one array per layer, each's items
// appended by items.
func appendLists(b []byte, layers []ForwardLayer, items func(*ForwardLayer, []byte) []byte) []byte {
	b = append(b, '[')
	for l := range layers {
		if l > 0 {
			b = append(b, ',')
		}
		b = append(items(&layers[l], append(b, '[')), ']')
	}
	return append(b, ']')
}

// appendRepeatedTail appends the array of get(layer) over layers, cut
// after the last entry that differs from the one before it: the layers
// past the array's end repeat its last entry.
func appendRepeatedTail(b []byte, layers []ForwardLayer, get func(*ForwardLayer) int64) []byte {
	n := min(len(layers), 1)
	for l := 1; l < len(layers); l++ {
		if get(&layers[l]) != get(&layers[l-1]) {
			n = l + 1
		}
	}
	b = append(b, '[')
	for l := range n {
		if l > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, get(&layers[l]), 10)
	}
	return append(b, ']')
}

// appendFloat32s appends a JSON array of float32s (see appendFloat32).
func appendFloat32s(b []byte, xs []float32) []byte {
	b = slices.Grow(b, 10*len(xs)+2)
	b = append(b, '[')
	for i, v := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat32(b, v)
	}
	return append(b, ']')
}

// appendProbs appends a JSON array of probabilities (see appendProb).
func appendProbs(b []byte, ps []float64) ([]byte, error) {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendProb(b, p); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// readFloat32s reads a JSON array of numbers and nulls into *dst, a null
// as null.
func readFloat32s(data []byte, dst *[]float32, null float32) error {
	var raw []*float32
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*dst = make([]float32, len(raw))
	for i, v := range raw {
		if v == nil {
			(*dst)[i] = null
		} else {
			(*dst)[i] = *v
		}
	}
	return nil
}

// MarshalJSON writes the probabilities at their precision (appendProb).
func (f Final) MarshalJSON() ([]byte, error) {
	type plain Final
	ps, err := appendProbs(make([]byte, 0, 12*len(f.Probs)+2), f.Probs)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		plain
		Probs json.RawMessage `json:"probs"`
	}{plain(f), ps})
}

// MarshalJSON writes the probability at its precision (appendProb), the
// fields in Chosen's order.
func (c Chosen) MarshalJSON() ([]byte, error) {
	p, err := appendProb(nil, c.Prob)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		ID    int             `json:"id"`
		Token string          `json:"token"`
		Prob  json.RawMessage `json:"prob"`
		Rank  int             `json:"rank"`
		By    string          `json:"by"`
	}{c.ID, c.Token, p, c.Rank, c.By})
}

// UnmarshalJSON reads a forward pass written by columns (Forward's
// MarshalJSON): every per-layer array as long as attn, a share for each
// head and an activation for each neuron, the bytes arrays
// at least one entry long when there are layers and no longer than attn;
// it fills in each layer's In and the bytes the arrays leave to repeat.
func (f *Forward) UnmarshalJSON(data []byte) error {
	var p struct {
		Embedding    float64          `json:"embedding"`
		Attn         []float64        `json:"attn"`
		Mid          []float64        `json:"mid"`
		MLP          []float64        `json:"mlp"`
		Out          []float64        `json:"out"`
		Heads        [][]int          `json:"heads"`
		HeadShares   [][]float64      `json:"head_shares"`
		Neurons      [][]int          `json:"neurons"`
		NeuronActs   [][]float32      `json:"neuron_acts"`
		Final        float64          `json:"final"`
		EmbedBytes   int64            `json:"embed_bytes"`
		UnembedBytes int64            `json:"unembed_bytes"`
		AttnBytes    []int64          `json:"attn_bytes"`
		MLPBytes     []int64          `json:"mlp_bytes"`
		Layers       *json.RawMessage `json:"layers"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if p.Layers != nil {
		return fmt.Errorf("trace: this forward pass lists its layers one by one, as tracer wrote it before it wrote them by columns: record the run again")
	}
	L := len(p.Attn)
	for _, c := range []struct {
		name string
		n    int
	}{{"mid", len(p.Mid)}, {"mlp", len(p.MLP)}, {"out", len(p.Out)}, {"heads", len(p.Heads)}, {"head_shares", len(p.HeadShares)}, {"neurons", len(p.Neurons)}, {"neuron_acts", len(p.NeuronActs)}} {
		if c.n != L {
			return fmt.Errorf("trace: the forward pass's %s has %d entries and its attn %d: want one per layer in each", c.name, c.n, L)
		}
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"attn_bytes", len(p.AttnBytes)}, {"mlp_bytes", len(p.MLPBytes)}} {
		if c.n > L || L > 0 && c.n == 0 {
			return fmt.Errorf("trace: the forward pass's %s has %d entries for %d layers: want 1 to %d (the layers after its end repeat its last)", c.name, c.n, L, L)
		}
	}
	*f = Forward{Embedding: p.Embedding, Final: p.Final, EmbedBytes: p.EmbedBytes, UnembedBytes: p.UnembedBytes}
	if L == 0 {
		return nil
	}
	f.Layers = make([]ForwardLayer, L)
	in := f.Embedding
	for l := range f.Layers {
		fl := ForwardLayer{
			In: in, Attn: p.Attn[l], Mid: p.Mid[l], MLP: p.MLP[l], Out: p.Out[l],
			Heads: make([]Head, len(p.Heads[l])), Neurons: make([]Neuron, len(p.Neurons[l])),
			AttnBytes: p.AttnBytes[min(l, len(p.AttnBytes)-1)], MLPBytes: p.MLPBytes[min(l, len(p.MLPBytes)-1)],
		}
		if len(p.HeadShares[l]) != len(fl.Heads) || len(p.NeuronActs[l]) != len(fl.Neurons) {
			return fmt.Errorf("trace: the forward pass's layer %d lists %d heads with %d shares and %d neurons with %d activations: want a share for each head and an activation for each neuron", l, len(fl.Heads), len(p.HeadShares[l]), len(fl.Neurons), len(p.NeuronActs[l]))
		}
		for k, i := range p.Heads[l] {
			fl.Heads[k] = Head{Index: i, Share: p.HeadShares[l][k]}
		}
		for k, i := range p.Neurons[l] {
			fl.Neurons[k] = Neuron{Index: i, Act: p.NeuronActs[l][k]}
		}
		f.Layers[l] = fl
		in = p.Out[l]
	}
	return nil
}

// comma appends the comma before item k of an array (none before item 0).
func comma(b []byte, k int) []byte {
	if k > 0 {
		b = append(b, ',')
	}
	return b
}
