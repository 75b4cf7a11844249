package arch

import (
	"tracer/engine/internal/mmap"
	"tracer/engine/tensor"
)

// Why the weight matrices of a model file are copied at load.
//
// Decode reads every weight once per token, so its speed is the speed of
// streaming the weights from memory. A file mapping is backed by the page
// cache in 4 KiB pages (ext4 holds some large folios, but a file read or
// written another way keeps small ones, and Linux without
// CONFIG_READ_ONLY_THP_FOR_FS refuses MADV_COLLAPSE on a file), so a pass
// over the 270 MB of a BF16 SmolLM2-135M misses the TLB once per 4 KiB:
// ~66,000 page walks a token, two-dimensional ones in a virtual machine.
// Measured on our AMD EPYC VM, one thread: the read kernel streams a file
// mapping at 26 GB/s and huge-page memory at 30 GB/s (4 KiB anonymous
// pages: 17.5); a Q8_0 decode token took 10 % less time from huge pages
// than from the mapping, and an F16 one 13 % less (`tracer bench --model
// FILE.gguf` at 0.77 of the bandwidth limit before, against 0.89 for the
// same weights built in memory, which mmap.Huge puts in huge pages).
//
// So the loaders (OpenHF, OpenGGUF, OpenLlama2c) copy the weight matrices
// (the 2-D tensors: all but norms and biases), bytes unchanged, into one
// region of anonymous memory advised MADV_HUGEPAGE, and drop from the
// process the mapping's pages they copied from. The cost is the copy at
// load (25-35 ms for 143 MB with the page cache warm; the mapping's first
// token used to pay part of that in page faults) and anonymous memory
// instead of page cache for those bytes: the resident size stays about the
// file's size, and the file's page cache is left to the kernel to reclaim.
// Nothing is copied, and the mapping serves as before, when the kernel
// gives no transparent huge pages, when the copy would take more than half
// of the available memory, or when the allocation fails: a copy is a
// speed-up, never a reason for a load to fail.

// OpenOption changes how OpenHF, OpenGGUF and OpenLlama2c load a model.
type OpenOption func(*openConfig)

type openConfig struct {
	mapped bool         // read the weights from the file mapping: no copy
	quant  tensor.DType // quantize every weight matrix to this type (quantize.go); 0: none
}

// Mapped leaves the weights in the file mapping, copying nothing: for a
// look at a model that computes nothing (tracer info), which then reads
// only the headers instead of every weight. Generation works too, from
// 4 KiB pages.
func Mapped() OpenOption { return func(c *openConfig) { c.mapped = true } }

func configOf(opts []OpenOption) openConfig {
	var c openConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// weightAlign is where each copied tensor starts in the region: a cache
// line, so no tensor shares its first line with the one before.
const weightAlign = 64

// hugeRegion returns, for tensors of the given sizes in bytes, slices of
// one region of huge-page memory, each starting on a cache line, and the
// function that frees the region. It returns nil, nil when no copy is
// worth making here (hugeCopyFits) or the allocation fails: the caller's
// mapping then serves.
func hugeRegion(sizes []int) ([][]byte, func() error) {
	total := 0
	for _, n := range sizes {
		total += (n + weightAlign - 1) / weightAlign * weightAlign
	}
	if total == 0 || !hugeCopyFits(total) {
		return nil, nil
	}
	region, free, err := mmap.Huge(total)
	if err != nil {
		return nil, nil
	}
	dsts := make([][]byte, len(sizes))
	off := 0
	for i, n := range sizes {
		dsts[i] = region[off : off+n : off+n]
		off += (n + weightAlign - 1) / weightAlign * weightAlign
	}
	return dsts, free
}

// hugeCopy copies each of srcs, parts of a read-only file mapping, into a
// region from hugeRegion and drops the mapping's pages it copied from. It
// returns the copies and the function that frees them, or nil, nil when it
// copied nothing (see hugeRegion).
func hugeCopy(srcs [][]byte) ([][]byte, func() error) {
	sizes := make([]int, len(srcs))
	for i, s := range srcs {
		sizes[i] = len(s)
	}
	dsts, free := hugeRegion(sizes)
	if dsts == nil {
		return nil, nil
	}
	for i, s := range srcs {
		copy(dsts[i], s)
		mmap.Drop(s)
	}
	return dsts, free
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
