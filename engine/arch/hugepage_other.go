//go:build !linux

package arch

// allocWeights returns n zeroed bytes from the Go heap: huge pages are a
// Linux matter. free does nothing.
func allocWeights(n int) (data []byte, free func() error, err error) {
	return make([]byte, n), func() error { return nil }, nil
}

// thpMode is "": transparent huge pages are a Linux matter.
func thpMode() string { return "" }

// memAvailable is -1: unknown outside Linux.
func memAvailable() int64 { return -1 }

// dropPages does nothing outside Linux.
func dropPages(b []byte) {}
