//go:build linux

package mmap

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// Huge returns n zeroed bytes of anonymous memory aligned to a huge page
// and advised MADV_HUGEPAGE, so that with transparent huge pages in
// "madvise" (or "always") mode the kernel backs them with 2 MiB pages:
// streaming through them then misses the TLB once per 2 MiB instead of
// once per 4 KiB. free unmaps them.
func Huge(n int) (data []byte, free func() error, err error) {
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

// Drop unmaps the whole pages of a read-only file mapping that b covers
// (MADV_DONTNEED): the page cache keeps them, the process no longer
// counts them, and a later read would fault them back in. Advice only; b
// must be part of a file mapping, never of Go memory.
func Drop(b []byte) {
	const page = 4096
	if len(b) < page {
		return
	}
	start := (addr(b) + page - 1) &^ (page - 1)
	end := (addr(b) + uintptr(len(b))) &^ (page - 1)
	if end <= start {
		return
	}
	_ = syscall.Madvise(b[start-addr(b):end-addr(b)], syscall.MADV_DONTNEED)
}

// THPMode is the selected mode of transparent huge pages ("always",
// "madvise" or "never"), "" when the kernel does not say.
func THPMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	_, rest, ok := bytes.Cut(b, []byte("["))
	mode, _, ok2 := bytes.Cut(rest, []byte("]"))
	if !ok || !ok2 {
		return ""
	}
	return string(mode)
}

// ProcBytes returns a "Name:   123 kB" field of a /proc file in bytes
// (MemAvailable of /proc/meminfo, VmRSS of /proc/self/status...), or -1
// when the file or the field is missing.
func ProcBytes(path, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return -1
		}
		return kb << 10
	}
	return -1
}
