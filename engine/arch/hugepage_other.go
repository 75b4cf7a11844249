//go:build !linux

package arch

// allocWeights returns n zeroed bytes from the Go heap: huge pages are a
// Linux matter. free does nothing.
func allocWeights(n int) (data []byte, free func() error, err error) {
	return make([]byte, n), func() error { return nil }, nil
}
