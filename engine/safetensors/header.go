package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"slices"
)

// maxHeaderLen bounds the JSON header, as the reference implementation does
// (100 MB): a larger length field is a corrupt or foreign file.
const maxHeaderLen = 100 << 20

// maxDataLen bounds a tensor's byte size so that products of shape
// dimensions cannot overflow int64 arithmetic.
const maxDataLen = 1 << 50

// header is a validated header.
type header struct {
	metadata  map[string]string
	entries   []entry // in header order
	dataStart int     // offset of the data region in the file
}

// entry is one tensor's header record with its offsets checked.
type entry struct {
	name       string
	dtype      DType
	shape      []int
	begin, end int // relative to the data region
}

// rawEntry is a tensor's header record as JSON spells it.
type rawEntry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

// parseHeader reads and validates the header of file, whose complete
// contents are data.
func parseHeader(file string, data []byte) (*header, error) {
	if len(data) < 8 {
		return nil, errorf(file, "", "file is %d bytes, too short for the 8-byte header length (truncated file?)", len(data))
	}
	n := binary.LittleEndian.Uint64(data[:8])
	rest := uint64(len(data) - 8)
	switch {
	case n > rest:
		return nil, errorf(file, "", "header length %d is larger than the file (%d bytes): truncated file, or not a safetensors file?", n, len(data))
	case n > maxHeaderLen:
		return nil, errorf(file, "", "header length %d exceeds the %d-byte limit (not a safetensors file?)", n, maxHeaderLen)
	case n < 2:
		return nil, errorf(file, "", "header length %d is too short for a JSON object", n)
	}
	h := &header{dataStart: 8 + int(n)}
	if err := h.decode(file, data[8:h.dataStart]); err != nil {
		return nil, err
	}
	if err := h.check(file, len(data)-h.dataStart); err != nil {
		return nil, err
	}
	return h, nil
}

// decode parses the JSON object, keeping the tensors in header order and
// refusing duplicate names.
func (h *header) decode(file string, js []byte) error {
	bad := func(err error) error {
		return &Error{File: file, Msg: "bad JSON header (not a safetensors file?)", Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	tok, err := dec.Token()
	if err != nil {
		return bad(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return bad(errors.New("want a JSON object"))
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		name, ok := tok.(string)
		if !ok {
			return bad(errors.New("want a tensor name"))
		}
		if seen[name] {
			return errorf(file, name, "listed twice in the header")
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&h.metadata); err != nil {
				return &Error{File: file, Msg: "bad __metadata__ (want string values)", Err: err}
			}
			continue
		}
		var r rawEntry
		if err := dec.Decode(&r); err != nil {
			return &Error{File: file, Tensor: name, Msg: "bad header entry", Err: err}
		}
		e, err := r.entry(file, name)
		if err != nil {
			return err
		}
		h.entries = append(h.entries, e)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return bad(err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		// Only spaces may pad the header; anything else means the length
		// field reaches past the JSON, into the data.
		return errorf(file, "", "header length %d is larger than its JSON object, which ends at byte %d of the header: the length field is wrong or the header is corrupt", len(js), end)
	}
	return nil
}

// entry checks one record on its own: known dtype, sane shape and offsets
// whose span matches the shape.
func (r rawEntry) entry(file, name string) (entry, error) {
	if r.DType == nil || r.Shape == nil || r.DataOffsets == nil {
		return entry{}, errorf(file, name, "header entry needs dtype, shape and data_offsets")
	}
	e := entry{name: name, dtype: DType(*r.DType)}
	size, ok := dtypeSize(e.dtype)
	if !ok {
		return entry{}, errorf(file, name, "unknown dtype %q", e.dtype)
	}
	bytes := int64(size)
	for _, d := range *r.Shape {
		if d < 0 {
			return entry{}, errorf(file, name, "negative dimension in shape %v", *r.Shape)
		}
		if d > 0 && bytes > maxDataLen/d {
			return entry{}, errorf(file, name, "shape %v is impossibly large", *r.Shape)
		}
		bytes *= d
		e.shape = append(e.shape, int(d))
	}
	if e.shape == nil {
		e.shape = []int{}
	}
	offs := *r.DataOffsets
	if len(offs) != 2 {
		return entry{}, errorf(file, name, "data_offsets %v: want [begin, end]", offs)
	}
	if offs[0] < 0 || offs[1] < offs[0] || offs[1] > maxDataLen {
		return entry{}, errorf(file, name, "data_offsets %v are not a valid range", offs)
	}
	if offs[1]-offs[0] != bytes {
		return entry{}, errorf(file, name, "shape %v of %s needs %d bytes but data_offsets %v span %d", e.shape, e.dtype, bytes, offs, offs[1]-offs[0])
	}
	e.begin, e.end = int(offs[0]), int(offs[1])
	return e, nil
}

// check verifies that every span lies inside the data region (dataLen bytes)
// and that no two spans overlap.
func (h *header) check(file string, dataLen int) error {
	for _, e := range h.entries {
		if e.end > dataLen {
			return errorf(file, e.name, "data_offsets [%d %d] run past the end of the file (%d bytes of data; truncated file?)", e.begin, e.end, dataLen)
		}
	}
	byBegin := slices.Clone(h.entries)
	slices.SortFunc(byBegin, func(a, b entry) int { return a.begin - b.begin })
	var last *entry // the non-empty span reaching furthest so far
	for i := range byBegin {
		cur := &byBegin[i]
		if cur.end == cur.begin {
			continue // an empty tensor occupies nothing
		}
		if last != nil && cur.begin < last.end {
			return errorf(file, cur.name, "data_offsets [%d %d] overlap tensor %q [%d %d]", cur.begin, cur.end, last.name, last.begin, last.end)
		}
		if last == nil || cur.end > last.end {
			last = cur
		}
	}
	return nil
}
