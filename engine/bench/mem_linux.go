//go:build linux

package bench

import (
	"os"

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

// sysfsCacheBytes is the size of the highest level of CPU 0's cache that
// sysfs lists (index3, else index2), or 0: a virtual machine often lists
// none. (/proc/cpuinfo's "cache size" is the L2 on AMD, and the package's
// total L3 that CPUID reports is not what one core's share of it holds:
// neither is used.)
func sysfsCacheBytes() int64 {
	for _, index := range []string{"index3", "index2"} {
		if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/" + index + "/size"); err == nil {
			if n := sizeBytes(string(b)); n > 0 {
				return n
			}
		}
	}
	return 0
}
