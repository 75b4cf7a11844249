//go:build unix

package hub

import "syscall"

// openNonblock makes open(2) return at once on a named pipe with no writer.
const openNonblock = syscall.O_NONBLOCK
