//go:build amd64 && !purego

package arch

import "golang.org/x/sys/cpu"

// useSiLUZ reports whether swiGLUGGMLZ runs here (AVX-512 F with the OS
// saving zmm registers, as x/sys/cpu checks).
var useSiLUZ = cpu.X86.HasAVX512F

// swiGLUGGMLZ is swiGLUGGML's blocks of 16 in AVX-512, each lane the
// AVX2 build's instructions (gguf_ggml_amd64.s); n a positive multiple of
// 16.
//
//go:noescape
func swiGLUGGMLZ(dst, gate, up *float32, n int)

// expSumZ writes dst[i] = expGGML(src[i] - sub) for i < n (a positive
// multiple of 16) and returns their sum as softmaxGGML adds them: each
// eight by tensor.HSum8, in float64 group after group.
//
//go:noescape
func expSumZ(dst, src *float32, sub float32, n int) float64

// rotatePairsZ is rotatePairsGGML over n pairs, n a positive multiple of
// 4, in AVX2 with FMA (gguf_ggml_amd64.s; every machine with AVX-512 F has
// them): the same bits.
//
//go:noescape
func rotatePairsZ(x, cos, sin *float32, n int)
