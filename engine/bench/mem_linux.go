//go:build linux

package bench

import (
	"os"
	"strconv"
	"strings"

	"tracer/engine/internal/mmap"
)

// anonHugeBytes is the process's memory in transparent huge pages, or -1.
func anonHugeBytes() int64 { return mmap.ProcBytes("/proc/self/smaps_rollup", "AnonHugePages") }

// RSSBytes is the process's resident memory, or -1.
func RSSBytes() int64 { return mmap.ProcBytes("/proc/self/status", "VmRSS") }

// PeakRSSBytes is the process's peak resident memory since the last
// ResetPeakRSS, or -1.
func PeakRSSBytes() int64 { return mmap.ProcBytes("/proc/self/status", "VmHWM") }

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
