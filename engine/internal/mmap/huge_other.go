//go:build !linux

package mmap

// Huge returns n zeroed bytes from the Go heap: huge pages are a Linux
// matter. free does nothing.
func Huge(n int) (data []byte, free func() error, err error) {
	return make([]byte, n), func() error { return nil }, nil
}

// Drop does nothing outside Linux.
func Drop(b []byte) {}

// THPMode is "": transparent huge pages are a Linux matter.
func THPMode() string { return "" }

// ProcBytes is -1: there is no /proc outside Linux.
func ProcBytes(path, name string) int64 { return -1 }
