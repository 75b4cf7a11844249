// Package tensor holds the numeric kernels of the engine: matrix-vector
// products, norms, softmax, rotary embeddings and activations on plain
// row-major []float32, destination first (Op(dst, inputs...)), each
// documented by the reference loop it computes.
//
// Activations are always float32. Weights may be stored as F32, BF16 or F16
// bytes (a Matrix): the kernels convert each element in registers as they
// read it (bfloat16 by a 16-bit shift, binary16 by VCVTPH2PS), so a
// memory-mapped checkpoint is used in place without a float32 copy.
//
// On amd64 with AVX2, FMA and F16C (checked at run time) the matrix
// products, Exp and SiLU run in assembly (kernels_amd64.s, exp_amd64.s);
// with AVX-512 as well (F, BW, VL), long rows (256 or more) run the
// kernels of kernels_avx512_amd64.s, which keep the same lanes (sixteen
// for float32 weights in one zmm register, thirty-two for 16-bit ones in
// two, so that a row is two FMA chains) and so compute the same bits as
// the AVX2 ones; elsewhere, or built with -tags purego, pure-Go loops
// compute the same sums in the same order, without fused multiply-adds.
// A decode step is bound by memory bandwidth: its kernels stream each
// weight row once, in order, and a weight of at most 64 KiB (an
// attention's keys or values), too short a stream for the hardware
// prefetchers, is asked of the caches whole before the product starts.
// Prefill is bound by arithmetic: its kernels reuse each weight row for
// several tokens from registers. A Pool splits both over goroutines
// with a fork and join of a few hundred nanoseconds.
//
// Shape mistakes are programmer bugs and panic; nothing here reads outside
// data.
package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// DType is the storage type of weight elements.
type DType uint8

// The supported storage types.
const (
	F32  DType = iota + 1 // IEEE 754 binary32
	F16                   // IEEE 754 binary16
	BF16                  // bfloat16: the top 16 bits of a binary32
)

// Size returns the bytes per element.
func (d DType) Size() int {
	switch d {
	case F32:
		return 4
	case F16, BF16:
		return 2
	}
	return 0
}

// String returns "f32", "f16" or "bf16", the spelling of engine.Info.DType.
func (d DType) String() string {
	switch d {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case BF16:
		return "bf16"
	}
	if s, ok := quantName(d); ok {
		return s
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Matrix is a weight matrix (Rows, Cols), row-major, at its stored dtype.
// Rows and columns mean storage order: a Linear layer's [out, in] weight is
// read by MatMul, a GPT-2 Conv1D's [in, out] weight by MatMulT.
type Matrix struct {
	Rows, Cols int
	DType      DType
	f32        []float32 // (Rows, Cols) when DType is F32
	u16        []uint16  // (Rows, Cols) bit patterns when DType is BF16 or F16
	q          []byte    // (Rows, Cols/block) ggml blocks when DType is quantized (quant.go)
	roundF16   bool      // F16 only: products round the activations to binary16 (RoundF16)
	packed     bool      // Q8_0, Q4_0, Q5_0, Q5_1, Q4_1 and IQ4_NL only: rows in the packed layout (NewPackedQuantMatrix)
	blockSums  bool      // Q4_0 only: products sum each block as one integer (SumBlocks)
}

// NewMatrix wraps data, rows*cols little-endian elements of dtype, without
// copying when the data is suitably aligned on a little-endian machine (a
// memory-mapped safetensors tensor always is). Otherwise the elements are
// copied once into native order.
func NewMatrix(data []byte, dtype DType, rows, cols int) (Matrix, error) {
	size := dtype.Size()
	if size == 0 {
		return Matrix{}, fmt.Errorf("tensor: unknown dtype %d", dtype)
	}
	if rows < 0 || cols < 0 || (cols > 0 && rows > math.MaxInt/cols/size) {
		return Matrix{}, fmt.Errorf("tensor: bad shape (%d, %d)", rows, cols)
	}
	if len(data) != rows*cols*size {
		return Matrix{}, fmt.Errorf("tensor: %d bytes for a (%d, %d) %s matrix, want %d", len(data), rows, cols, dtype, rows*cols*size)
	}
	m := Matrix{Rows: rows, Cols: cols, DType: dtype}
	n := rows * cols
	if n == 0 {
		return m, nil
	}
	aligned := uintptr(unsafe.Pointer(&data[0]))%uintptr(size) == 0
	if dtype == F32 {
		if aligned && littleEndian() {
			m.f32 = unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), n)
		} else {
			m.f32 = make([]float32, n)
			for i := range m.f32 {
				m.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			}
		}
		return m, nil
	}
	if aligned && littleEndian() {
		m.u16 = unsafe.Slice((*uint16)(unsafe.Pointer(&data[0])), n)
	} else {
		m.u16 = make([]uint16, n)
		for i := range m.u16 {
			m.u16[i] = binary.LittleEndian.Uint16(data[2*i:])
		}
	}
	return m, nil
}

// F32Matrix wraps data (rows, cols) as an F32 matrix.
func F32Matrix(data []float32, rows, cols int) Matrix {
	if len(data) != rows*cols {
		panic(fmt.Sprintf("tensor: F32Matrix: %d elements for (%d, %d)", len(data), rows, cols))
	}
	return Matrix{Rows: rows, Cols: cols, DType: F32, f32: data}
}

// Bytes returns the storage size of the matrix in bytes.
func (m Matrix) Bytes() int64 {
	elems, bytes := m.DType.Block()
	return int64(m.Rows) * int64(m.Cols/elems) * int64(bytes)
}

// Row converts row i to float32: dst[j] = W[i][j] for j < Cols.
func (m Matrix) Row(dst []float32, i int) {
	if len(dst) != m.Cols || i < 0 || i >= m.Rows {
		panic(fmt.Sprintf("tensor: Row(%d) of (%d, %d) into %d", i, m.Rows, m.Cols, len(dst)))
	}
	lo, hi := i*m.Cols, (i+1)*m.Cols
	switch m.DType {
	case F32:
		copy(dst, m.f32[lo:hi])
	case BF16:
		for j, b := range m.u16[lo:hi] {
			dst[j] = BF16ToF32(b)
		}
	case F16:
		for j, b := range m.u16[lo:hi] {
			dst[j] = F16ToF32(b)
		}
	default:
		m.dequantRow(dst, i)
	}
}

// At returns W[i][j] as float32.
func (m Matrix) At(i, j int) float32 {
	if i < 0 || i >= m.Rows || j < 0 || j >= m.Cols {
		panic(fmt.Sprintf("tensor: At(%d, %d) of (%d, %d)", i, j, m.Rows, m.Cols))
	}
	if m.DType.Quantized() {
		return m.quantAt(i, j)
	}
	k := i*m.Cols + j
	switch m.DType {
	case BF16:
		return BF16ToF32(m.u16[k])
	case F16:
		return F16ToF32(m.u16[k])
	}
	return m.f32[k]
}

// Decode converts little-endian elements of dtype to float32: dst[i] =
// float32(src element i). len(dst) must be len(src)/dtype.Size().
func Decode(dst []float32, src []byte, dtype DType) {
	size := dtype.Size()
	if size == 0 || len(src) != len(dst)*size {
		panic(fmt.Sprintf("tensor: Decode %d bytes of %s into %d", len(src), dtype, len(dst)))
	}
	for i := range dst {
		switch dtype {
		case F32:
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		case BF16:
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		case F16:
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	}
}

// littleEndian reports whether the machine stores integers little-endian,
// the byte order of safetensors and llama2.c files.
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
