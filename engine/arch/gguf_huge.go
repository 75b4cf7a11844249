package arch

import (
	"tracer/engine/gguf"
	"tracer/engine/internal/mmap"
	"tracer/engine/tensor"
)

// copyWeights moves the weight matrices of f (the quantized tensors and the
// 2-D float ones) into huge-page memory (huge.go says why), pointing their
// Data at the copies, and writes the matrices the VNNI kernels read packed
// (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL) there in the
// packed layout where it pays (packable). f must come from gguf.Open: the
// pages copied from are dropped from its file mapping. It returns the
// function that frees the copies, or nil when it copied nothing, and the
// names of the packed tensors.
func copyWeights(f *gguf.File) (free func() error, packed map[string]bool) {
	var idx, sizes []int
	for i, t := range f.Tensors {
		if weightTensor(t) {
			idx = append(idx, i)
			sizes = append(sizes, len(t.Data))
		}
	}
	dsts, free := hugeRegion(sizes)
	if dsts == nil {
		return nil, nil // the mapping serves
	}
	packed = map[string]bool{}
	for k, i := range idx {
		t, dst := f.Tensors[i], dsts[k]
		if dt, cols, ok := packable(t); ok && tensor.PackQuantRows(dst, t.Data, dt, cols) == nil {
			packed[t.Name] = true
		} else {
			copy(dst, t.Data)
		}
		mmap.Drop(t.Data)
		f.Tensors[i].Data = dst
	}
	return free, packed
}

// weightTensor reports whether t is a weight matrix tracer computes with:
// quantized (any shape ggml gives it) or a 2-D float tensor. Norms and
// biases, 1-D, stay in the mapping.
func weightTensor(t gguf.TensorInfo) bool {
	dt, ok := dtypeOf(t.Type)
	return ok && len(t.Data) > 0 && (dt.Quantized() || len(t.Dims) == 2)
}

// packable reports whether t is a matrix whose rows are faster in the
// packed layout (tensor.PackedLayout: Q8_0, Q4_0, Q5_0, Q4_1, Q5_1 and IQ4_NL where the VNNI kernels
// run), with its dtype and row length. Only the order of each quad of
// rows' bytes changes, not the bytes read per token.
func packable(t gguf.TensorInfo) (tensor.DType, int, bool) {
	dt, ok := dtypeOf(t.Type)
	if !ok || !tensor.PackedLayout(dt) || len(t.Dims) != 2 || t.Dims[0] > 1<<30 {
		return dt, 0, false
	}
	return dt, int(t.Dims[0]), true
}

// packQuantized writes the packable matrices of f in the packed layout,
// in place, and returns their names. The tensors' Data must be tracer's
// own memory (built in memory), never a file mapping.
func packQuantized(f *gguf.File) map[string]bool {
	packed := map[string]bool{}
	for _, t := range f.Tensors {
		if dt, cols, ok := packable(t); ok && tensor.PackQuantRows(t.Data, t.Data, dt, cols) == nil {
			packed[t.Name] = true
		}
	}
	return packed
}
