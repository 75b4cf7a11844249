package arch

import (
	"tracer/engine/gguf"
	"tracer/engine/internal/mmap"
	"tracer/engine/tensor"
)

// Why a GGUF file's quantized weights are copied at load.
//
// Decode reads every weight once per token, so its speed is the speed of
// streaming the weights from memory. A file mapping is backed by the page
// cache in 4 KiB pages (ext4 holds some large folios, but a file read or
// written another way keeps small ones, and Linux without
// CONFIG_READ_ONLY_THP_FOR_FS refuses MADV_COLLAPSE on a file), so a pass
// over 143 MB of a SmolLM2-135M Q8_0 file misses the TLB once per 4 KiB:
// ~35,000 page walks a token, two-dimensional ones in a virtual machine.
// Measured on our AMD EPYC VM, one thread: the read kernel streams a
// file mapping at 26 GB/s and huge-page memory at 30 GB/s (4 KiB
// anonymous pages: 17.5), and a Q8_0 decode token takes 10 % less time
// from huge pages than from the mapping, the whole gap between
// `tracer bench --model FILE.gguf` and the same weights built in memory
// (which mmap.Huge puts in huge pages).
//
// So OpenGGUF copies the quantized tensors (the bulk of a quantized file),
// bytes unchanged, into one region of anonymous memory advised
// MADV_HUGEPAGE, and drops from the process the mapping's pages it copied
// from. The cost is the copy at load (25-35 ms instead of 1 ms for the
// 143 MB file with the page cache warm; the mapping's first token used to
// pay part of that in page faults) and anonymous memory instead of page
// cache for those bytes: the resident size stays about the file's size,
// and the file's page cache is left to the kernel to reclaim. Float
// tensors (F32, F16, BF16) stay in the mapping: no float weights are
// copied. Nothing is copied, and the mapping serves as before, when the
// kernel gives no transparent huge pages, when the copy would take more
// than half of the available memory, or when the allocation fails: a copy
// is a speed-up, never a reason for the open to fail.

// quantAlign is where each copied tensor starts in the region: a cache
// line, so no tensor shares its first line with the one before.
const quantAlign = 64

// copyQuantized moves the quantized tensors of f into huge-page memory
// (see above), pointing their Data at the copies, and writes the Q8_0 and
// Q4_0 matrices there in the packed layout where it pays (packable). f
// must come from gguf.Open: the pages copied from are dropped from its
// file mapping. It returns the function that frees the copies, or nil when
// it copied nothing, and the names of the packed tensors.
func copyQuantized(f *gguf.File) (free func() error, packed map[string]bool) {
	total := 0
	for _, t := range f.Tensors {
		if quantizedTensor(t) {
			total += (len(t.Data) + quantAlign - 1) / quantAlign * quantAlign
		}
	}
	if total == 0 || !hugeCopyFits(total) {
		return nil, nil
	}
	region, free, err := mmap.Huge(total)
	if err != nil {
		return nil, nil // the mapping serves
	}
	packed = map[string]bool{}
	off := 0
	for i, t := range f.Tensors {
		if !quantizedTensor(t) {
			continue
		}
		n := len(t.Data)
		dst := region[off : off+n : off+n]
		if dt, cols, ok := packable(t); ok && tensor.PackQuantRows(dst, t.Data, dt, cols) == nil {
			packed[t.Name] = true
		} else {
			copy(dst, t.Data)
		}
		mmap.Drop(t.Data)
		f.Tensors[i].Data = dst
		off += (n + quantAlign - 1) / quantAlign * quantAlign
	}
	return free, packed
}

// quantizedTensor reports whether t holds quantized weights tracer
// computes with.
func quantizedTensor(t gguf.TensorInfo) bool {
	dt, ok := dtypeOf(t.Type)
	return ok && dt.Quantized() && len(t.Data) > 0
}

// packable reports whether t is a matrix whose rows are faster in the
// packed layout (tensor.PackedLayout: Q8_0 and Q4_0 where the VNNI kernels
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

// hugeCopyFits reports whether copying n bytes into huge pages is worth
// it here: the kernel hands out transparent huge pages on request, and n
// is at most half of the memory available.
func hugeCopyFits(n int) bool {
	thp, avail := mmap.THPMode(), mmap.ProcBytes("/proc/meminfo", "MemAvailable")
	return copyWorthIt(n, thp, avail)
}

// copyWorthIt is hugeCopyFits's rule on its inputs: thp the bracketed
// word of /sys/kernel/mm/transparent_hugepage/enabled ("always",
// "madvise" or "never"; "" when unknown) and avail MemAvailable in bytes
// (negative when unknown).
func copyWorthIt(n int, thp string, avail int64) bool {
	return (thp == "always" || thp == "madvise") && avail > 0 && int64(n) <= avail/2
}
