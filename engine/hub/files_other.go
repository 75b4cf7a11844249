//go:build !unix

package hub

// openNonblock is nothing where open does not wait on named pipes the unix
// way; the type check before opening still applies.
const openNonblock = 0
