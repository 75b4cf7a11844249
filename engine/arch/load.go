package arch

import (
	"fmt"
	"slices"

	"tracer/engine/safetensors"
	"tracer/engine/tensor"
)

// loader takes tensors out of a checkpoint, checking each against the shape
// config.json implies, and counts what it hands out.
type loader struct {
	ck     tensorSource
	where  string // the checkpoint's folder, for errors
	files  string // its files, for errors
	config string // path of config.json, for errors

	params  int64
	bytes   int64
	byDType map[tensor.DType]int64 // bytes per stored dtype
	qc      quantCount             // quantizes the matrices as they load (the Quantized option)
}

// tensorSource is where a loader finds tensors: a *safetensors.Checkpoint,
// or a *safetensors.File in memory (NewRandom).
type tensorSource interface {
	Tensor(name string) (safetensors.Tensor, bool)
}

// newLoader reads the tensors of ck; where and files name it in errors.
func newLoader(ck tensorSource, where, files, config string) *loader {
	return &loader{ck: ck, where: where, files: files, config: config, byDType: map[tensor.DType]int64{}, qc: quantCount{byDType: map[tensor.DType]int64{}}}
}

// get returns the tensor called name, checking its dtype and shape.
func (ld *loader) get(name string, shape ...int) (safetensors.Tensor, tensor.DType, error) {
	t, ok := ld.ck.Tensor(name)
	if !ok {
		return t, 0, fmt.Errorf("arch: %s: tensor %q is missing (files: %s)", ld.where, name, ld.files)
	}
	var dt tensor.DType
	switch t.DType {
	case safetensors.F32:
		dt = tensor.F32
	case safetensors.BF16:
		dt = tensor.BF16
	case safetensors.F16:
		dt = tensor.F16
	default:
		return t, 0, fmt.Errorf("arch: %s: tensor %q has dtype %s, want F32, F16 or BF16", t.File, name, t.DType)
	}
	if !slices.Equal(t.Shape, shape) {
		return t, 0, fmt.Errorf("arch: %s: tensor %q has shape %v, %s says %v", t.File, name, t.Shape, ld.config, shape)
	}
	ld.params += t.Elements()
	ld.bytes += int64(len(t.Data))
	ld.byDType[dt] += int64(len(t.Data))
	return t, dt, nil
}

// matrix returns the (rows, cols) weight called name, in place.
func (ld *loader) matrix(name string, rows, cols int) (tensor.Matrix, error) {
	t, dt, err := ld.get(name, rows, cols)
	if err != nil {
		return tensor.Matrix{}, err
	}
	m, err := tensor.NewMatrix(t.Data, dt, rows, cols)
	if err == nil {
		m, err = ld.qc.matrix(m)
	}
	if err != nil {
		return tensor.Matrix{}, fmt.Errorf("arch: %s: tensor %q: %w", t.File, name, err)
	}
	return m, nil
}

// vector returns the (n) tensor called name widened to float32: norm
// weights and biases are small, and transformers holds them in float32 too.
func (ld *loader) vector(name string, n int) ([]float32, error) {
	t, dt, err := ld.get(name, n)
	if err != nil {
		return nil, err
	}
	v := make([]float32, n)
	tensor.Decode(v, t.Data, dt)
	return v, nil
}

// optVector is vector when want is true and nil otherwise, for biases a
// config switches on.
func (ld *loader) optVector(want bool, name string, n int) ([]float32, error) {
	if !want {
		return nil, nil
	}
	return ld.vector(name, n)
}

// has reports whether the checkpoint holds name.
func (ld *loader) has(name string) bool {
	_, ok := ld.ck.Tensor(name)
	return ok
}

// dtype is the stored dtype holding the most weight bytes.
func (ld *loader) dtype() tensor.DType {
	best := tensor.F32
	for dt, n := range ld.byDType {
		if n > ld.byDType[best] || n == ld.byDType[best] && dt < best {
			best = dt
		}
	}
	return best
}
