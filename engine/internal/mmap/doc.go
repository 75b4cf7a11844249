// Package mmap maps model files read-only into memory, so weights are used
// in place at their stored dtype instead of being copied. Overwriting a file
// while it is mapped makes later reads of it fault: callers document this.
//
// It also holds the memory that weights are streamed from when they are
// not a file's (Huge: anonymous memory in 2 MiB pages), and the kernel's
// figures that choose between the two (THPMode, ProcBytes).
package mmap
