//go:build !linux

package bench

// Elsewhere the process's memory figures are unknown (-1).

func anonHugeBytes() int64 { return -1 }

// RSSBytes is the process's resident memory: unknown (-1) here.
func RSSBytes() int64 { return -1 }

// PeakRSSBytes is the process's peak resident memory: unknown (-1) here.
func PeakRSSBytes() int64 { return -1 }

// ResetPeakRSS cannot reset the peak here: it reports false.
func ResetPeakRSS() bool { return false }

// sysfsCacheBytes is unknown (0) here: ProbeMachine measures the cache.
func sysfsCacheBytes() int64 { return 0 }
