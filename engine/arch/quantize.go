package arch

import (
	"fmt"
	"strings"

	"tracer/engine"
	"tracer/engine/tensor"
)

// Quantizing a model as it loads (the Quantized option): every weight
// matrix of a float model (a Hugging Face folder, an F32/F16/BF16 GGUF
// file, a llama2.c .bin) becomes blocks of one llama.cpp type, byte for
// byte as llama-quantize writes them without an importance matrix
// (tensor.QuantizeRow), so that a student compares F32 against Q4_K of
// the same weights without a second file. Matrices a file already holds
// quantized are kept; norm weights and biases stay float32, as
// llama-quantize keeps them.

// QuantizeTypes are the types Quantized makes, by name.
var QuantizeTypes = []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K}

// ParseQuantize reads a --quantize value ("q4_k", "Q8_0"; "" for none).
func ParseQuantize(s string) (tensor.DType, error) {
	if s == "" {
		return 0, nil
	}
	var names []string
	for _, t := range QuantizeTypes {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
		names = append(names, t.String())
	}
	return 0, fmt.Errorf("quantize %q: tracer quantizes to %s", s, strings.Join(names, ", "))
}

// Quantized quantizes every weight matrix to dtype as the model loads
// (see quantizedMatrix); dtype 0 leaves the weights as stored.
func Quantized(dtype tensor.DType) OpenOption {
	return func(c *openConfig) { c.quant = dtype }
}

// quantizedMatrix returns m in blocks of q, or of llama-quantize's
// fallback type where m's rows are not whole blocks of q (K-quants want
// rows of 256 values: Q4_K falls back to Q5_0, Q5_K to Q5_1, Q6_K to
// Q8_0). m itself comes back when q is 0, when m is already quantized,
// and when its rows fit no block of 32 either (llama-quantize then keeps
// the tensor as it is).
func quantizedMatrix(m tensor.Matrix, q tensor.DType) (tensor.Matrix, error) {
	if q == 0 || m.DType.Quantized() {
		return m, nil
	}
	if elems, _ := q.Block(); m.Cols%elems != 0 {
		q = tensor.KFallback(q)
	}
	if elems, _ := q.Block(); m.Cols%elems != 0 {
		return m, nil
	}
	return m.Quantize(q)
}

// quantCount quantizes the matrices a loader hands out (quant 0: none)
// and counts what that changes: bytes, the weights' bytes after less
// before, and byDType, the quantized types' bytes.
type quantCount struct {
	quant   tensor.DType
	bytes   int64
	byDType map[tensor.DType]int64
}

// matrix returns m quantized (quantizedMatrix), counted.
func (c *quantCount) matrix(m tensor.Matrix) (tensor.Matrix, error) {
	out, err := quantizedMatrix(m, c.quant)
	if err != nil || out.DType == m.DType {
		return out, err
	}
	c.bytes += out.Bytes() - m.Bytes()
	c.byDType[out.DType] += out.Bytes()
	c.byDType[m.DType] -= m.Bytes()
	return out, nil
}

// describe sets a quantized model's weight types and dtype in info (whose
// WeightBytes already count the quantized matrices and DType names the
// stored dtype), with the activation roundings of its matrices: a model
// loaded as stored is left as it is.
func (c *quantCount) describe(info *engine.Info, rounding []string) {
	if c.quant == 0 || len(c.byDType) == 0 {
		return
	}
	types := map[string]int64{strings.ToLower(info.DType): info.WeightBytes - c.bytes} // as stored
	for dt, b := range c.byDType {
		types[dt.String()] += b
	}
	for k, b := range types {
		if b <= 0 {
			delete(types, k)
		}
	}
	best := ""
	for k, b := range types {
		if best == "" || b > types[best] || b == types[best] && k < best {
			best = k
		}
	}
	info.WeightTypes, info.DType, info.ActivationRounding = types, best, rounding
}
