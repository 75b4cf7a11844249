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

// appendNorms appends a JSON array of norms (appendNorm), null for nil as
// encoding/json writes a nil slice.
func appendNorms(b []byte, vs []float64) ([]byte, error) {
	if vs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendNorm(b, v); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// MarshalJSON writes the norms at their precision (appendNorm), the
// fields in Forward's order.
func (f Forward) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 96+288*len(f.Layers)), `{"embedding":`...)
	b, err := appendNorm(b, f.Embedding)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"layers":`...)
	if f.Layers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, l := range f.Layers {
			if i > 0 {
				b = append(b, ',')
			}
			var prev *ForwardLayer
			if i > 0 {
				prev = &f.Layers[i-1]
			}
			if b, err = l.appendJSON(b, prev); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"final":`...)
	if b, err = appendNorm(b, f.Final); err != nil {
		return nil, err
	}
	b = strconv.AppendInt(append(b, `,"embed_bytes":`...), f.EmbedBytes, 10)
	b = strconv.AppendInt(append(b, `,"unembed_bytes":`...), f.UnembedBytes, 10)
	return append(b, '}'), nil
}

// MarshalJSON writes the norms at their precision (appendNorm), the
// fields in ForwardLayer's order. In is not written: it is the previous
// layer's Out (layer 0's: the embedding's), which reading fills in
// (Forward.UnmarshalJSON); a trace at 30 layers a step is a third smaller
// for it and for the neurons' pairs. Within a Forward, a layer's bytes are
// left out too where they are the layer before's (appendJSON).
func (l ForwardLayer) MarshalJSON() ([]byte, error) {
	return l.appendJSON(nil, nil)
}

// appendJSON appends the layer as MarshalJSON writes it, leaving out
// attn_bytes and mlp_bytes where they equal those of prev (the layer
// before in a Forward; nil for the first): the layers of most models read
// the same, so a step at 30 layers is 15 % smaller for it.
func (l ForwardLayer) appendJSON(b []byte, prev *ForwardLayer) ([]byte, error) {
	neurons, err := json.Marshal(l.Neurons)
	if err != nil {
		return nil, err
	}
	b = slices.Grow(b, 96+12*len(l.Heads)+len(neurons))
	for i, v := range []float64{l.Attn, l.Mid, l.MLP, l.Out} {
		b = append(b, []string{`{"attn":`, `,"mid":`, `,"mlp":`, `,"out":`}[i]...)
		if b, err = appendNorm(b, v); err != nil {
			return nil, err
		}
	}
	if b, err = appendNorms(append(b, `,"heads":`...), l.Heads); err != nil {
		return nil, err
	}
	b = append(append(b, `,"neurons":`...), neurons...)
	if prev == nil || prev.AttnBytes != l.AttnBytes {
		b = strconv.AppendInt(append(b, `,"attn_bytes":`...), l.AttnBytes, 10)
	}
	if prev == nil || prev.MLPBytes != l.MLPBytes {
		b = strconv.AppendInt(append(b, `,"mlp_bytes":`...), l.MLPBytes, 10)
	}
	return append(b, '}'), nil
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

// UnmarshalJSON reads a forward pass and fills in each layer's In: the
// stream entering a layer is the one leaving the layer before it, the
// embedding's for layer 0; and a layer's attn_bytes and mlp_bytes, where
// they are left out, from the layer before's (layer 0 must hold both).
func (f *Forward) UnmarshalJSON(data []byte) error {
	type plain Forward // without this method
	var p struct {
		plain
		Layers []struct {
			ForwardLayer
			AttnBytes *int64 `json:"attn_bytes"`
			MLPBytes  *int64 `json:"mlp_bytes"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*f = Forward(p.plain)
	f.Layers = nil
	if p.Layers != nil {
		f.Layers = make([]ForwardLayer, len(p.Layers))
	}
	in := f.Embedding
	var prev ForwardLayer // the layer before's, for bytes left out
	for i, l := range p.Layers {
		fl := l.ForwardLayer
		for _, b := range []struct {
			name      string
			got       *int64
			dst, from *int64
		}{{"attn_bytes", l.AttnBytes, &fl.AttnBytes, &prev.AttnBytes}, {"mlp_bytes", l.MLPBytes, &fl.MLPBytes, &prev.MLPBytes}} {
			switch {
			case b.got != nil:
				*b.dst = *b.got
			case i == 0:
				return fmt.Errorf("trace: forward layer 0 has no %s", b.name)
			default:
				*b.dst = *b.from
			}
		}
		fl.In = in
		in, prev = fl.Out, fl
		f.Layers[i] = fl
	}
	return nil
}

// MarshalJSON writes a neuron as the pair [index, act], act at float32's
// precision.
func (n Neuron) MarshalJSON() ([]byte, error) {
	if n.Act != n.Act || math.IsInf(float64(n.Act), 0) {
		return nil, fmt.Errorf("trace: neuron %d's activation %v cannot be written: it is not a number", n.Index, n.Act)
	}
	b := strconv.AppendInt(append(make([]byte, 0, 24), '['), int64(n.Index), 10)
	return append(appendFloat32(append(b, ','), n.Act), ']'), nil
}

// UnmarshalJSON reads a neuron's pair [index, act].
func (n *Neuron) UnmarshalJSON(data []byte) error {
	var pair []json.Number
	if err := json.Unmarshal(data, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("trace: a neuron is [index, act], got %.40s", data)
	}
	i, err := pair[0].Int64()
	if err != nil || i < 0 || i > math.MaxInt32 {
		return fmt.Errorf("trace: a neuron's index is a count, got %s", pair[0])
	}
	a, err := strconv.ParseFloat(string(pair[1]), 32)
	if err != nil {
		return fmt.Errorf("trace: a neuron's activation is a float32, got %s", pair[1])
	}
	n.Index, n.Act = int(i), float32(a)
	return nil
}
