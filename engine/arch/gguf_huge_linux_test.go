//go:build linux

package arch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tracer/engine/gguf"
	"tracer/engine/internal/mmap"
	"tracer/engine/tensor"
)

// TestOpenGGUFCopiesQuantized: OpenGGUF reads quantized weights from
// anonymous (huge-page) memory, not from the file mapping, and F16
// weights from the mapping (no float copy); the logits are those of the
// same file parsed from memory, bit for bit (issue 16: decode from the
// mapping's 4 KiB pages ran at 67-73 % of the bandwidth limit).
func TestOpenGGUFCopiesQuantized(t *testing.T) {
	if !hugeCopyFits(1 << 20) {
		t.Skipf("no copy here: transparent huge pages %q, MemAvailable %d bytes", mmap.THPMode(), mmap.ProcBytes("/proc/meminfo", "MemAvailable"))
	}
	for _, c := range []struct {
		dtype    tensor.DType
		field    string // of tensor.Matrix holding the weights
		wantFile bool   // the weights stay in the file mapping
	}{
		{tensor.Q8_0, "q", false},
		{tensor.Q4_0, "q", false},
		{tensor.F16, "u16", true},
	} {
		t.Run(c.dtype.String(), func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteRandomGGUF(&buf, "tiny", ggufTinyShape, c.dtype, 7); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "tiny.gguf")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			em, err := OpenGGUF(path)
			if err != nil {
				t.Fatal(err)
			}
			m := em.(*Model)
			defer m.Close()
			wq := m.net.(*llama).layers[0].wq
			at := reflect.ValueOf(wq).FieldByName(c.field).Pointer()
			where, err := mappingOf(at)
			if err != nil {
				t.Fatal(err)
			}
			if inFile := where == path; inFile != c.wantFile {
				t.Errorf("blk.0.attn_q.weight (%s) lies in mapping %q: got in the file %v, want %v", c.dtype, where, inFile, c.wantFile)
			}

			f, err := gguf.Parse("tiny.gguf", buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			fromBytes, err := newGGUF(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, got := decodeLast(t, fromBytes, 3), decodeLast(t, m, 3)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("logit %d: got %v opened from the file, want %v parsed from memory", i, got[i], want[i])
				}
			}
		})
	}
}

// mappingOf returns the path of the mapping of this process that holds
// address a ("" for anonymous memory), from /proc/self/maps.
func mappingOf(a uintptr) (string, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		var lo, hi uintptr
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil {
			return "", fmt.Errorf("/proc/self/maps line %q: %v", sc.Text(), err)
		}
		if lo <= a && a < hi {
			if len(fields) < 6 {
				return "", nil
			}
			return fields[5], nil
		}
	}
	return "", fmt.Errorf("address %#x is in no mapping of /proc/self/maps", a)
}
