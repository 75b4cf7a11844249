package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultProbeBytes is the array the bandwidth probe reads unless told:
// four times the last-level cache and at least 512 MiB, so that no cache
// holds it. tracer bench and the server's traffic panel both use it.
func DefaultProbeBytes() int64 { return max(4*sysfsCacheBytes(), 512<<20) }

// DefaultProbeReps is how many timed passes a bandwidth measurement
// takes unless told; figures are their median.
const DefaultProbeReps = 10

// Machine is what the probe found of the memory a step's weights are read
// from: main memory's read bandwidth (an array of DefaultProbeBytes) and
// the CPU cache's (a prefix of that array half the cache's size), both
// with every thread, each with the spread of its passes, and when it was
// measured.
type Machine struct {
	Threads    int       `json:"threads"`
	DRAM       Bandwidth `json:"dram"`
	Cache      Bandwidth `json:"cache"`       // zero when the cache's size is unknown
	CacheBytes int64     `json:"cache_bytes"` // the last-level cache, as the kernel says or as measured; 0 when unknown
	ProbeBytes int64     `json:"probe_bytes"`
	Passes     int       `json:"passes"`
	At         time.Time `json:"at"`
}

// Known reports whether the machine has been measured.
func (m Machine) Known() bool { return m.DRAM.MedianGBps > 0 }

// For returns the bandwidth a step moving bytes is compared with, and
// whether those bytes fit in the CPU cache: a model whose step
// reads less than the cache holds is read from the cache after its first
// steps, not from main memory.
func (m Machine) For(bytes int64) (Bandwidth, bool) {
	if m.CacheBytes > 0 && bytes > 0 && bytes <= m.CacheBytes && m.Cache.MedianGBps > 0 {
		return m.Cache, true
	}
	return m.DRAM, false
}

// ProbeMachine measures main memory and the CPU cache with threads
// threads, reps passes each (DefaultProbeReps when 0), as ProbeBandwidth
// measures for tracer bench: the same kernel over an array of the same
// size, written first. The cache's size is the kernel's (sysfs) where it
// says; where it does not (virtual machines often hide it), it is
// measured: the largest prefix of the array, of the sizes doubling from
// 256 KiB to a quarter of it, that reads at least kneeRatio times as fast
// as the whole.
func ProbeMachine(threads, reps int) (Machine, error) {
	if reps <= 0 {
		reps = DefaultProbeReps
	}
	threads = max(threads, 1)
	m := Machine{Threads: threads, ProbeBytes: DefaultProbeBytes(), CacheBytes: sysfsCacheBytes(), Passes: reps}
	a, free, err := allocFloats(int(m.ProbeBytes / 4))
	if err != nil {
		return Machine{}, fmt.Errorf("bench: probe array of %d bytes: %w", m.ProbeBytes, err)
	}
	defer free()
	inParallel(threads, func(t int) {
		part := a[len(a)*t/threads : len(a)*(t+1)/threads]
		for i := range part {
			part[i] = 1 + float32(i&7)*1e-3
		}
	})
	m.DRAM = MeasureRead(a, threads, reps)
	// A prefix of size n is read sweeps times per pass, so that a pass
	// takes about as long as one over the whole array.
	prefix := func(n int64) Bandwidth {
		return measureSweeps(a[:n/4], threads, reps, int(m.ProbeBytes/n))
	}
	if m.CacheBytes == 0 {
		// Every size is tried, not only up to the first slow one: a pass
		// slowed by another process must not end the search early.
		for n := int64(256 << 10); n <= m.ProbeBytes/4; n *= 2 {
			if prefix(n).MedianGBps >= kneeRatio*m.DRAM.MedianGBps {
				m.CacheBytes = n
			}
		}
	}
	if m.CacheBytes > 0 && m.CacheBytes/2 <= m.ProbeBytes {
		m.Cache = prefix(max(m.CacheBytes/2, 64<<10))
	}
	m.At = time.Now()
	return m, nil
}

// kneeRatio is how much faster than main memory an array must read to
// count as held by the cache, where the cache's size is measured.
const kneeRatio = 1.5

// sizeBytes reads a cache size as sysfs writes it ("32768K", "32M").
func sizeBytes(s string) int64 {
	s = strings.TrimSpace(s)
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n * mul
}
