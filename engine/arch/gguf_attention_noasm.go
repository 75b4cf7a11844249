//go:build !amd64 || purego

package arch

// The AVX-512 attention sums' signatures, never called here: useSiLUZ is
// false.

func scoresGGMLZ(dst, k, q *float32, hd, keys int)      { panic("no asm") }
func kqvLanesZ(out, v, w *float32, hd, keys, lanes int) { panic("no asm") }
