//go:build linux

package arch

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// allocWeights returns n zeroed bytes of anonymous memory aligned to a huge
// page and advised MADV_HUGEPAGE, so that with transparent huge pages in
// "madvise" (or "always") mode the kernel backs them with 2 MiB pages. free
// unmaps them.
func allocWeights(n int) (data []byte, free func() error, err error) {
	size := (n+hugePage-1)/hugePage*hugePage + hugePage // room to align
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	off := 0
	if a := addr(mem) % hugePage; a != 0 {
		off = hugePage - int(a)
	}
	// Advice only: a kernel without THP refuses it and keeps 4 KiB pages.
	_ = syscall.Madvise(mem[off:off+(n+hugePage-1)/hugePage*hugePage], syscall.MADV_HUGEPAGE)
	return mem[off : off+n : off+n], func() error { return syscall.Munmap(mem) }, nil
}

// addr is the address of b's first byte; b must not be empty.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
