//go:build amd64 && !purego

package arch

// scoresGGMLZ writes dst[j] = dotGGML(k[j·hd:(j+1)·hd], q) for j < keys
// in AVX-512 (gguf_attention_amd64.s); hd a positive multiple of 32.
//
//go:noescape
func scoresGGMLZ(dst, k, q *float32, hd, keys int)

// kqvLanesZ is kqvGGML in AVX-512, lanes 8 (a prompt) or 32 (a decode
// step); hd a positive multiple of 16.
//
//go:noescape
func kqvLanesZ(out, v, w *float32, hd, keys, lanes int)
