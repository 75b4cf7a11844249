//go:build amd64 && !purego

package arch

// scoresTinyZ writes dst[j] = dotTiny(k[j·hd:(j+1)·hd], q) for j < keys
// in AVX-512 (gguf_attention_amd64.s); hd a positive multiple of 16.
//
//go:noescape
func scoresTinyZ(dst, k, q *float32, hd, keys int)

// kqvTinyZ is kqvTinyGo in AVX-512; hd a positive multiple of 16.
//
//go:noescape
func kqvTinyZ(out, v, w *float32, hd, keys int)
