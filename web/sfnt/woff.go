package sfnt

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// WOFF 1.0 layout (https://www.w3.org/TR/WOFF/): a 44-byte header, a
// 20-byte directory entry per table sorted by tag, then the tables, each
// zlib-compressed unless that would not make it smaller, each starting on
// a 4-byte boundary.
const (
	woffHeaderSize = 44
	woffEntrySize  = 20
)

// WOFF packs sfnt (a TrueType or OpenType font) as WOFF 1.0: each table
// compressed with zlib where that makes it smaller, its checksum that of
// the uncompressed table. Browsers unpack it to the same font.
func WOFF(sfnt []byte) ([]byte, error) {
	f, err := parse(sfnt)
	if err != nil {
		return nil, err
	}
	tables := slices.Clone(f.tables)
	slices.SortFunc(tables, func(a, b table) int { return strings.Compare(a.tag, b.tag) })
	n := len(tables)
	stored := make([][]byte, n)
	total := 12 + 16*n // the sfnt the browser rebuilds
	for i, t := range tables {
		var z bytes.Buffer
		zw, err := zlib.NewWriterLevel(&z, zlib.BestCompression)
		if err != nil {
			return nil, fmt.Errorf("sfnt: woff: %w", err)
		}
		zw.Write(t.data) // a bytes.Buffer does not fail
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("sfnt: woff: compress %q: %w", t.tag, err)
		}
		stored[i] = t.data
		if z.Len() < len(t.data) {
			stored[i] = z.Bytes()
		}
		total += pad4(len(t.data))
	}
	size := woffHeaderSize + woffEntrySize*n
	for _, s := range stored {
		size = pad4(size) + len(s)
	}
	size = pad4(size) // the last table is padded too, so the file's length is a multiple of 4
	out := make([]byte, size)
	binary.BigEndian.PutUint32(out, signatureWOFF)
	binary.BigEndian.PutUint32(out[4:], f.version)
	binary.BigEndian.PutUint32(out[8:], uint32(size))
	binary.BigEndian.PutUint16(out[12:], uint16(n))
	binary.BigEndian.PutUint32(out[16:], uint32(total))
	binary.BigEndian.PutUint16(out[20:], 1) // the WOFF file's version, 1.0
	// metaOffset, metaLength, metaOrigLength, privOffset, privLength: 0, no extended metadata or private data.
	off := woffHeaderSize + woffEntrySize*n
	for i, t := range tables {
		off = pad4(off)
		e := out[woffHeaderSize+woffEntrySize*i:]
		copy(e, t.tag)
		binary.BigEndian.PutUint32(e[4:], uint32(off))
		binary.BigEndian.PutUint32(e[8:], uint32(len(stored[i])))
		binary.BigEndian.PutUint32(e[12:], uint32(len(t.data)))
		binary.BigEndian.PutUint32(e[16:], tableChecksum(t))
		copy(out[off:], stored[i])
		off += len(stored[i])
	}
	return out, nil
}
