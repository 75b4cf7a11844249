//go:build !linux

package bench

// Elsewhere the probe array comes from the Go heap and the process's
// memory figures are unknown (-1).

func allocFloats(n int) ([]float32, func(), error) { return make([]float32, n), func() {}, nil }
func anonHugeBytes() int64                         { return -1 }
func rssBytes() int64                              { return -1 }
func peakRSSBytes() int64                          { return -1 }
func resetPeakRSS() bool                           { return false }
func l3Bytes() int64                               { return 0 }
