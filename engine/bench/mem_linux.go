//go:build linux

package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// allocFloats returns n zeroed float32s of anonymous memory aligned to a
// huge page and advised MADV_HUGEPAGE, as membw.c's hugepages=1 does; free
// unmaps them.
func allocFloats(n int) (a []float32, free func(), err error) {
	bytes := (n*4+hugePage-1)/hugePage*hugePage + hugePage
	mem, err := syscall.Mmap(-1, 0, bytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	off := 0
	if r := uintptr(unsafe.Pointer(&mem[0])) % hugePage; r != 0 {
		off = hugePage - int(r)
	}
	body := mem[off : off+(n*4+hugePage-1)/hugePage*hugePage]
	_ = syscall.Madvise(body, syscall.MADV_HUGEPAGE) // advice only
	a = unsafe.Slice((*float32)(unsafe.Pointer(&body[0])), n)
	return a, func() { syscall.Munmap(mem) }, nil
}

// procField returns a "Name:   123 kB" field of a /proc file in bytes, or
// -1.
func procField(path, name string) int64 {
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

// anonHugeBytes is the process's memory in transparent huge pages, or -1.
func anonHugeBytes() int64 { return procField("/proc/self/smaps_rollup", "AnonHugePages") }

// RSSBytes is the process's resident memory, or -1.
func RSSBytes() int64 { return procField("/proc/self/status", "VmRSS") }

// PeakRSSBytes is the process's peak resident memory since the last
// ResetPeakRSS, or -1.
func PeakRSSBytes() int64 { return procField("/proc/self/status", "VmHWM") }

// ResetPeakRSS sets the peak resident memory to the current one; it
// reports whether the kernel allowed it.
func ResetPeakRSS() bool { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil }

// l3Bytes is the size of the last-level cache of CPU 0, or 0 when unknown.
func l3Bytes() int64 {
	b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/index3/size")
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n * mul
}
