package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Info describes a tensor to write: its data follows the header in the order
// given.
type Info struct {
	Name  string
	DType DType
	Shape []int
}

// WriteHeader writes the length field and the JSON header for tensors whose
// data the caller then writes, in the same order, with nothing in between.
// The header is padded with spaces to a multiple of 8 bytes, as the
// reference implementation does, so that the data region starts aligned.
func WriteHeader(w io.Writer, tensors []Info, metadata map[string]string) error {
	var js bytes.Buffer
	js.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			js.WriteByte(',')
		}
		first = false
	}
	if metadata != nil {
		sep()
		b, err := json.Marshal(metadata)
		if err != nil {
			return err
		}
		js.WriteString(`"__metadata__":`)
		js.Write(b)
	}
	var off int64
	for _, t := range tensors {
		size := t.DType.Size()
		if size == 0 {
			return fmt.Errorf("safetensors: write: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		n := int64(size)
		for _, d := range t.Shape {
			n *= int64(d)
		}
		name, err := json.Marshal(t.Name)
		if err != nil {
			return err
		}
		shape, _ := json.Marshal(t.Shape)
		if t.Shape == nil {
			shape = []byte("[]")
		}
		sep()
		fmt.Fprintf(&js, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, t.DType, shape, off, off+n)
		off += n
	}
	js.WriteByte('}')
	if pad := (8 - js.Len()%8) % 8; pad > 0 {
		js.WriteString(strings.Repeat(" ", pad))
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(js.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(js.Bytes())
	return err
}

// Write writes a complete safetensors file holding tensors, in order. Each
// tensor's Data must hold product(Shape) elements.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	infos := make([]Info, len(tensors))
	for i, t := range tensors {
		infos[i] = Info{Name: t.Name, DType: t.DType, Shape: t.Shape}
		if want := t.Elements() * int64(t.DType.Size()); int64(len(t.Data)) != want {
			return fmt.Errorf("safetensors: write: tensor %q: %d bytes of data, shape %v of %s needs %d", t.Name, len(t.Data), t.Shape, t.DType, want)
		}
	}
	if err := WriteHeader(w, infos, metadata); err != nil {
		return err
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}
