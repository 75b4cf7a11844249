//go:build linux

package tensor

import (
	"syscall"
	"unsafe"
)

// benchBytes returns n bytes for benchmark weights in transparent huge
// pages when the kernel allows it, as arch.NewRandom stores them; the
// memory is never freed (benchmarks only).
func benchBytes(n int) []byte {
	const huge = 2 << 20
	mem, err := syscall.Mmap(-1, 0, n+huge, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]byte, n)
	}
	off := (huge - int(uintptr(unsafe.Pointer(&mem[0]))%huge)) % huge
	_ = syscall.Madvise(mem[off:off+n], syscall.MADV_HUGEPAGE)
	return mem[off : off+n : off+n]
}
