// Package mmap maps model files read-only into memory, so weights are used
// in place at their stored dtype instead of being copied. Overwriting a file
// while it is mapped makes later reads of it fault: callers document this.
package mmap
