package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Write writes a version-3 GGUF file: meta in order (each Value of the Go
// type its Type names, see ValueType), then the tensors' infos and their
// Data at offsets aligned to alignment (0: general.alignment's value if
// meta has it, else DefaultAlignment). It is how tests build files; a
// File read by Parse writes back to an equivalent file.
func Write(w io.Writer, meta []KV, tensors []TensorInfo, alignment uint64) error {
	if alignment == 0 {
		alignment = DefaultAlignment
		for _, kv := range meta {
			if kv.Key == "general.alignment" {
				if a, ok := asUint(kv.Value); ok && a > 0 && a&(a-1) == 0 {
					alignment = a
				}
			}
		}
	}
	bw := &writer{w: bufio.NewWriter(w)}
	bw.raw([]byte(Magic))
	bw.u32(3)
	bw.u64(uint64(len(tensors)))
	bw.u64(uint64(len(meta)))
	for _, kv := range meta {
		bw.str(kv.Key)
		bw.u32(uint32(kv.Type))
		if err := bw.value(kv.Type, kv.Value); err != nil {
			return fmt.Errorf("gguf: write metadata %q: %w", kv.Key, err)
		}
	}
	var off uint64
	for _, t := range tensors {
		bw.str(t.Name)
		bw.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			bw.u64(d)
		}
		bw.u32(uint32(t.Type))
		bw.u64(off)
		off = alignUp(off+uint64(len(t.Data)), alignment)
	}
	bw.pad(alignment)
	for _, t := range tensors {
		bw.raw(t.Data)
		bw.pad(alignment)
	}
	if bw.err != nil {
		return fmt.Errorf("gguf: write: %w", bw.err)
	}
	return bw.w.Flush()
}

// writer writes little-endian values, keeping the first error.
type writer struct {
	w   *bufio.Writer
	n   uint64
	err error
}

func (w *writer) raw(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
		w.n += uint64(len(b))
	}
}

func (w *writer) u32(v uint32) { w.raw(binary.LittleEndian.AppendUint32(nil, v)) }
func (w *writer) u64(v uint64) { w.raw(binary.LittleEndian.AppendUint64(nil, v)) }
func (w *writer) str(s string) { w.u64(uint64(len(s))); w.raw([]byte(s)) }

func (w *writer) pad(a uint64) {
	if n := alignUp(w.n, a) - w.n; n > 0 {
		w.raw(make([]byte, n))
	}
}

// typeOf is the value type a Go value is written as.
func typeOf(v any) ValueType {
	switch v.(type) {
	case uint8:
		return TypeUint8
	case int8:
		return TypeInt8
	case bool:
		return TypeBool
	case uint16:
		return TypeUint16
	case int16:
		return TypeInt16
	case uint32:
		return TypeUint32
	case int32:
		return TypeInt32
	case float32:
		return TypeFloat32
	case uint64:
		return TypeUint64
	case int64:
		return TypeInt64
	case float64:
		return TypeFloat64
	case string:
		return TypeString
	}
	return TypeArray
}

// value writes v as type t.
func (w *writer) value(t ValueType, v any) error {
	if got := typeOf(v); got != t {
		return fmt.Errorf("value of Go type %T given for type %s", v, t)
	}
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		w.raw([]byte{x})
	case int8:
		w.raw([]byte{byte(x)})
	case bool:
		w.raw([]byte{map[bool]byte{false: 0, true: 1}[x]})
	case uint16:
		w.raw(le.AppendUint16(nil, x))
	case int16:
		w.raw(le.AppendUint16(nil, uint16(x)))
	case uint32:
		w.u32(x)
	case int32:
		w.u32(uint32(x))
	case float32:
		w.u32(math.Float32bits(x))
	case uint64:
		w.u64(x)
	case int64:
		w.u64(uint64(x))
	case float64:
		w.u64(math.Float64bits(x))
	case string:
		w.str(x)
	default:
		return w.array(v)
	}
	return nil
}

// array writes a typed slice (or []any of arrays) as an array value.
func (w *writer) array(v any) error {
	write := func(et ValueType, n int, each func(i int) any) error {
		w.u32(uint32(et))
		w.u64(uint64(n))
		for i := 0; i < n; i++ {
			if err := w.value(et, each(i)); err != nil {
				return err
			}
		}
		return nil
	}
	switch a := v.(type) {
	case []uint8:
		return write(TypeUint8, len(a), func(i int) any { return a[i] })
	case []int8:
		return write(TypeInt8, len(a), func(i int) any { return a[i] })
	case []bool:
		return write(TypeBool, len(a), func(i int) any { return a[i] })
	case []uint16:
		return write(TypeUint16, len(a), func(i int) any { return a[i] })
	case []int16:
		return write(TypeInt16, len(a), func(i int) any { return a[i] })
	case []uint32:
		return write(TypeUint32, len(a), func(i int) any { return a[i] })
	case []int32:
		return write(TypeInt32, len(a), func(i int) any { return a[i] })
	case []float32:
		return write(TypeFloat32, len(a), func(i int) any { return a[i] })
	case []uint64:
		return write(TypeUint64, len(a), func(i int) any { return a[i] })
	case []int64:
		return write(TypeInt64, len(a), func(i int) any { return a[i] })
	case []float64:
		return write(TypeFloat64, len(a), func(i int) any { return a[i] })
	case []string:
		return write(TypeString, len(a), func(i int) any { return a[i] })
	case []any:
		return write(TypeArray, len(a), func(i int) any { return a[i] })
	}
	return fmt.Errorf("value of Go type %T cannot be written", v)
}
