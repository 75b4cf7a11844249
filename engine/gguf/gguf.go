package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"tracer/engine/internal/mmap"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// Limits on what a file may declare, far above any real model but low
// enough that nothing derived from them overflows.
const (
	maxDims     = 4       // ggml tensors have at most 4 dimensions
	maxKeyLen   = 1 << 16 // bytes in a metadata key or tensor name
	maxNesting  = 4       // arrays of arrays
	maxElements = 1 << 48 // elements in one tensor
)

// ErrFormat is wrapped by every error about a malformed file.
var ErrFormat = errors.New("bad GGUF file")

// File is a parsed GGUF file. Its tensors' Data slice the bytes it was
// parsed from (for Open, the memory-mapped file): they are valid until
// Close.
type File struct {
	Name       string // the path or name given, for errors
	Version    uint32
	Meta       []KV // in file order
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64 // where the tensor data starts

	byKey    map[string]int
	byTensor map[string]int
	unmap    func() error
}

// KV is one metadata entry.
type KV struct {
	Key   string
	Type  ValueType // of Value; for an array, TypeArray
	Value any       // see ValueType for the Go type of each
}

// TensorInfo describes one tensor and holds its bytes.
type TensorInfo struct {
	Name   string
	Dims   []uint64 // innermost (contiguous) first, as ggml's ne: a (rows, cols) matrix is [cols, rows]
	Type   Type
	Offset uint64 // from the start of the data section
	Data   []byte // the tensor's bytes: Type.RowBytes(Dims[0]) · the other dims
}

// Elements returns the tensor's element count.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d)
	}
	return n
}

// opened counts the files Open has mapped and parsed (Opened).
var opened atomic.Int64

// Opened is how many files Open has mapped and parsed in this process, for
// tests and diagnostics: opening a model should parse its file once.
func Opened() int64 { return opened.Load() }

// Open memory-maps and parses the GGUF file at path. Close unmaps it.
func Open(path string) (*File, error) {
	opened.Add(1)
	data, unmap, err := mmap.File(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(path, data)
	if err != nil {
		unmap()
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// Close releases the file's mapping; its tensors' Data must not be used
// afterwards.
func (f *File) Close() error {
	if f == nil || f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	return err
}

// Parse reads a whole GGUF file held in data; name is used in errors.
func Parse(name string, data []byte) (*File, error) {
	r := &reader{name: name, data: data}
	f := &File{Name: name, Alignment: DefaultAlignment, byKey: map[string]int{}, byTensor: map[string]int{}}
	if err := r.header(f); err != nil {
		return nil, err
	}
	return f, nil
}

// reader walks the bytes of a file, failing cleanly at the end.
type reader struct {
	name string
	data []byte
	off  uint64
	err  error
}

func (r *reader) fail(format string, args ...any) error {
	if r.err == nil {
		r.err = fmt.Errorf("gguf: %s: %w: "+format, append([]any{r.name, ErrFormat}, args...)...)
	}
	return r.err
}

// left is the number of unread bytes.
func (r *reader) left() uint64 { return uint64(len(r.data)) - r.off }

// take returns the next n bytes, or nil and an error naming what when the
// file ends first.
func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.left() {
		r.fail("%s at byte %d needs %d bytes, only %d are left in the %d-byte file (truncated file?)", what, r.off, n, r.left(), len(r.data))
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8(what string) uint8 {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16(what string) uint16 {
	if b := r.take(2, what); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if b := r.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if b := r.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// str reads a string: a uint64 length, then that many bytes.
func (r *reader) str(what string, limit uint64) string {
	n := r.u64(what + " length")
	if r.err != nil {
		return ""
	}
	if n > limit {
		r.fail("%s at byte %d is %d bytes long, over the limit of %d", what, r.off-8, n, limit)
		return ""
	}
	return string(r.take(n, what))
}

// header reads everything up to the data section.
func (r *reader) header(f *File) error {
	if len(r.data) < 4 || string(r.data[:4]) != Magic {
		return fmt.Errorf("gguf: %s: %w: the file does not start with %q (not a GGUF file?)", r.name, ErrFormat, Magic)
	}
	r.off = 4
	f.Version = r.u32("version")
	if r.err == nil && f.Version != 2 && f.Version != 3 {
		return r.fail("version %d not supported (want 2 or 3; re-convert the model with a current llama.cpp)", f.Version)
	}
	nTensors := r.u64("tensor count")
	nKV := r.u64("metadata count")
	if r.err != nil {
		return r.err
	}
	// A metadata entry takes at least 8+0+4+1 bytes, a tensor info 8+4+8+4+8.
	if nKV > r.left()/13 {
		return r.fail("metadata count %d cannot fit in the %d bytes left", nKV, r.left())
	}
	if nTensors > r.left()/32 {
		return r.fail("tensor count %d cannot fit in the %d bytes left", nTensors, r.left())
	}
	f.Meta = make([]KV, 0, nKV)
	for i := uint64(0); i < nKV; i++ {
		kv := r.kv(i)
		if r.err != nil {
			return r.err
		}
		if _, dup := f.byKey[kv.Key]; dup {
			return r.fail("metadata key %q appears twice", kv.Key)
		}
		f.byKey[kv.Key] = len(f.Meta)
		f.Meta = append(f.Meta, kv)
	}
	if err := f.alignment(r); err != nil {
		return err
	}
	f.Tensors = make([]TensorInfo, 0, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		t := r.tensorInfo(i)
		if r.err != nil {
			return r.err
		}
		if _, dup := f.byTensor[t.Name]; dup {
			return r.fail("tensor %q appears twice", t.Name)
		}
		f.byTensor[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	f.DataOffset = alignUp(r.off, f.Alignment)
	if f.DataOffset > uint64(len(r.data)) {
		if len(f.Tensors) > 0 {
			return r.fail("the data section would start at byte %d, past the end of the %d-byte file", f.DataOffset, len(r.data))
		}
		f.DataOffset = uint64(len(r.data))
	}
	return f.placeTensors(r)
}

// alignment reads general.alignment: a non-zero power of two.
func (f *File) alignment(r *reader) error {
	i, ok := f.byKey["general.alignment"]
	if !ok {
		return nil
	}
	v, ok := asUint(f.Meta[i].Value)
	if !ok || v == 0 || v&(v-1) != 0 || v > 1<<20 {
		return r.fail("general.alignment is %v (%s), want a power of two up to 2^20", f.Meta[i].Value, f.Meta[i].Type)
	}
	f.Alignment = v
	return nil
}

func alignUp(off, a uint64) uint64 {
	if rem := off % a; rem != 0 {
		return off + a - rem
	}
	return off
}

// kv reads metadata entry i.
func (r *reader) kv(i uint64) KV {
	key := r.str(fmt.Sprintf("metadata key %d", i), maxKeyLen)
	t := ValueType(r.u32(fmt.Sprintf("type of metadata %q", key)))
	if r.err != nil {
		return KV{}
	}
	return KV{Key: key, Type: t, Value: r.value(key, t, 0)}
}

// value reads one value of type t for key.
func (r *reader) value(key string, t ValueType, depth int) any {
	what := fmt.Sprintf("metadata %q", key)
	switch t {
	case TypeUint8:
		return r.u8(what)
	case TypeInt8:
		return int8(r.u8(what))
	case TypeUint16:
		return r.u16(what)
	case TypeInt16:
		return int16(r.u16(what))
	case TypeUint32:
		return r.u32(what)
	case TypeInt32:
		return int32(r.u32(what))
	case TypeFloat32:
		return math.Float32frombits(r.u32(what))
	case TypeUint64:
		return r.u64(what)
	case TypeInt64:
		return int64(r.u64(what))
	case TypeFloat64:
		return math.Float64frombits(r.u64(what))
	case TypeBool:
		b := r.u8(what)
		if r.err == nil && b > 1 {
			r.fail("%s is a bool holding %d, want 0 or 1", what, b)
		}
		return b == 1
	case TypeString:
		return r.str(what, r.left())
	case TypeArray:
		return r.array(key, depth)
	}
	r.fail("%s has unknown value type %d", what, uint32(t))
	return nil
}

// array reads an array value: element type, count, elements. Arrays of
// numbers and strings become typed slices ([]int32, []string, ...);
// arrays of arrays become []any.
func (r *reader) array(key string, depth int) any {
	what := fmt.Sprintf("metadata %q", key)
	if depth >= maxNesting {
		r.fail("%s nests arrays more than %d deep", what, maxNesting)
		return nil
	}
	et := ValueType(r.u32(what + " element type"))
	n := r.u64(what + " element count")
	if r.err != nil {
		return nil
	}
	size := et.minSize()
	if size == 0 {
		r.fail("%s is an array of unknown value type %d", what, uint32(et))
		return nil
	}
	if hi, lo := bits.Mul64(n, size); hi != 0 || lo > r.left() {
		r.fail("%s holds %d elements of type %s, more than the %d bytes left in the file", what, n, et, r.left())
		return nil
	}
	switch et {
	case TypeString:
		out := make([]string, n)
		for i := range out {
			out[i] = r.str(what, r.left())
		}
		return out
	case TypeArray:
		out := make([]any, n)
		for i := range out {
			out[i] = r.array(key, depth+1)
		}
		return out
	}
	b := r.take(n*size, what)
	if r.err != nil {
		return nil
	}
	return decodeArray(et, b, int(n))
}

// decodeArray turns the bytes of n fixed-size elements into a typed slice.
func decodeArray(et ValueType, b []byte, n int) any {
	le := binary.LittleEndian
	switch et {
	case TypeUint8:
		return append([]uint8(nil), b...)
	case TypeInt8:
		return decodeEach(b, n, 1, func(e []byte) int8 { return int8(e[0]) })
	case TypeBool:
		return decodeEach(b, n, 1, func(e []byte) bool { return e[0] != 0 })
	case TypeUint16:
		return decodeEach(b, n, 2, le.Uint16)
	case TypeInt16:
		return decodeEach(b, n, 2, func(e []byte) int16 { return int16(le.Uint16(e)) })
	case TypeUint32:
		return decodeEach(b, n, 4, le.Uint32)
	case TypeInt32:
		return decodeEach(b, n, 4, func(e []byte) int32 { return int32(le.Uint32(e)) })
	case TypeFloat32:
		return decodeEach(b, n, 4, func(e []byte) float32 { return math.Float32frombits(le.Uint32(e)) })
	case TypeUint64:
		return decodeEach(b, n, 8, le.Uint64)
	case TypeInt64:
		return decodeEach(b, n, 8, func(e []byte) int64 { return int64(le.Uint64(e)) })
	case TypeFloat64:
		return decodeEach(b, n, 8, func(e []byte) float64 { return math.Float64frombits(le.Uint64(e)) })
	}
	return nil
}

// decodeEach reads n little-endian elements of size bytes each from b
// (whose length the caller checked) with one decoder.
func decodeEach[T any](b []byte, n, size int, decode func([]byte) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = decode(b[size*i : size*(i+1)])
	}
	return out
}

// tensorInfo reads tensor info i (its data is placed later).
func (r *reader) tensorInfo(i uint64) TensorInfo {
	var t TensorInfo
	t.Name = r.str(fmt.Sprintf("tensor %d name", i), maxKeyLen)
	what := fmt.Sprintf("tensor %q", t.Name)
	nd := r.u32(what + " dimension count")
	if r.err != nil {
		return t
	}
	if nd == 0 || nd > maxDims {
		r.fail("%s has %d dimensions, want 1 to %d", what, nd, maxDims)
		return t
	}
	t.Dims = make([]uint64, nd)
	elems := uint64(1)
	for j := range t.Dims {
		t.Dims[j] = r.u64(what + " dimension")
		if r.err != nil {
			return t
		}
		hi, lo := bits.Mul64(elems, t.Dims[j])
		if t.Dims[j] == 0 || hi != 0 || lo > maxElements {
			r.fail("%s has dimensions %v: each must be positive and the product at most 2^48", what, t.Dims[:j+1])
			return t
		}
		elems = lo
	}
	t.Type = Type(r.u32(what + " type"))
	t.Offset = r.u64(what + " offset")
	return t
}

// placeTensors checks each tensor's type, alignment and extent, and slices
// its bytes.
func (f *File) placeTensors(r *reader) error {
	dataLen := uint64(len(r.data)) - f.DataOffset
	for i := range f.Tensors {
		t := &f.Tensors[i]
		bs, bb := t.Type.Block()
		if bs == 0 {
			return r.fail("tensor %q has ggml type %s, which tracer does not know", t.Name, t.Type)
		}
		if t.Dims[0]%uint64(bs) != 0 {
			return r.fail("tensor %q (%s) has rows of %d elements, not a multiple of the type's block of %d", t.Name, t.Type, t.Dims[0], bs)
		}
		size := t.Dims[0] / uint64(bs) * uint64(bb) // ≤ 2^48·292/32: no overflow
		for _, d := range t.Dims[1:] {
			size *= d // elements ≤ 2^48 and bytes per element ≤ 10
		}
		if t.Offset%f.Alignment != 0 {
			return r.fail("tensor %q starts at data offset %d, not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)
		}
		if t.Offset > dataLen || size > dataLen-t.Offset {
			return r.fail("tensor %q (%s, dims %v, %d bytes at data offset %d) runs past the end of the file: the data section holds %d bytes (truncated file?)",
				t.Name, t.Type, t.Dims, size, t.Offset, dataLen)
		}
		start := f.DataOffset + t.Offset
		t.Data = r.data[start : start+size : start+size]
	}
	return nil
}
