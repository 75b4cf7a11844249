// Package safetensors reads Hugging Face safetensors checkpoints (one
// model.safetensors or the shards named by model.safetensors.index.json) by
// memory-mapping them read-only: tensors are exposed as raw little-endian
// bytes with their dtype and shape, nothing is copied or converted.
//
// The format: an 8-byte little-endian header length N, N bytes of JSON
//
//	{"__metadata__": {"format": "pt"}, "name": {"dtype": "F32", "shape": [64, 512], "data_offsets": [0, 131072]}, ...}
//
// then the data region; offsets are relative to its start. Every header is
// validated before a tensor is handed out: the length fits the file, the JSON
// is well formed, each dtype is known and each shape times the element size
// equals its data_offsets span, and the spans lie inside the data region
// without overlapping.
package safetensors

import (
	"fmt"
	"slices"

	"tracer/engine/internal/mmap"
)

// DType is an element type as the header spells it ("F32", "BF16", ...).
type DType string

// The element types that models compute with. Other safetensors dtypes are
// accepted by the parser (so a checkpoint carrying an integer buffer still
// opens) but refused by Float.
const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
)

// dtypeSizes maps every dtype of the safetensors format to its element size
// in bytes. Unknown dtypes are refused by the parser.
func dtypeSize(d DType) (int, bool) {
	switch d {
	case F32, "I32", "U32":
		return 4, true
	case F16, BF16, "I16", "U16":
		return 2, true
	case "F64", "I64", "U64":
		return 8, true
	case "BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "F8_E8M0":
		return 1, true
	}
	return 0, false
}

// Size returns the size of one element in bytes, 0 for an unknown dtype.
func (d DType) Size() int {
	n, _ := dtypeSize(d)
	return n
}

// Float reports whether d is one of the floating-point types models compute
// with: F32, F16 or BF16.
func (d DType) Float() bool { return d == F32 || d == F16 || d == BF16 }

// Tensor is one tensor of a file. Data aliases the file's memory mapping: it
// is read-only and valid until the File is closed.
type Tensor struct {
	Name  string
	File  string // path of the file that holds it
	DType DType
	Shape []int  // row-major; [] for a scalar
	Data  []byte // little-endian elements, len = product(Shape) * DType.Size()
}

// Elements returns the number of elements, the product of Shape.
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Error is a problem with a safetensors file or index. Tensor is empty when
// the problem is not one tensor's.
type Error struct {
	File   string
	Tensor string
	Msg    string
	Err    error // the underlying error, if any
}

func (e *Error) Error() string {
	s := "safetensors: " + e.File + ": "
	if e.Tensor != "" {
		s += fmt.Sprintf("tensor %q: ", e.Tensor)
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(file, tensor, format string, args ...any) *Error {
	return &Error{File: file, Tensor: tensor, Msg: fmt.Sprintf(format, args...)}
}

// File is one parsed safetensors file.
type File struct {
	Path     string
	Metadata map[string]string // the "__metadata__" entry, nil when absent

	tensors map[string]Tensor
	names   []string // in header order
	data    []byte   // the whole file
	unmap   func() error
}

// Open memory-maps path read-only and parses its header. Close releases the
// mapping; tensors must not be used after that.
func Open(path string) (*File, error) {
	data, unmap, err := mmap.File(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "open", Err: err}
	}
	f, err := Parse(path, data)
	if err != nil {
		unmap()
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// Parse parses the bytes of a whole safetensors file already in memory; name
// is used in errors. The returned File's tensors alias data.
func Parse(name string, data []byte) (*File, error) {
	h, err := parseHeader(name, data)
	if err != nil {
		return nil, err
	}
	f := &File{Path: name, Metadata: h.metadata, tensors: make(map[string]Tensor, len(h.entries)), data: data}
	base := h.dataStart
	for _, e := range h.entries {
		f.names = append(f.names, e.name)
		f.tensors[e.name] = Tensor{
			Name:  e.name,
			File:  name,
			DType: e.dtype,
			Shape: e.shape,
			Data:  data[base+e.begin : base+e.end : base+e.end],
		}
	}
	return f, nil
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (Tensor, bool) {
	t, ok := f.tensors[name]
	return t, ok
}

// Names returns the tensor names in header order.
func (f *File) Names() []string { return slices.Clone(f.names) }

// Close unmaps the file. It is safe to call more than once.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	f.tensors = nil
	f.data = nil
	if err != nil {
		return &Error{File: f.Path, Msg: "unmap", Err: err}
	}
	return nil
}
