//go:build !linux

package tensor

// benchBytes returns n bytes for benchmark weights.
func benchBytes(n int) []byte { return make([]byte, n) }
