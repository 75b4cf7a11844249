//go:build !unix

package mmap

import "os"

// File reads the whole file where memory mapping is not available.
func File(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
