//go:build !amd64 || purego

package arch

// useSiLUZ is false: without the amd64 assembly, swiGLUGGML runs its Go
// loop.
const useSiLUZ = false

func swiGLUGGMLZ(dst, gate, up *float32, n int) { panic("no asm") }

func expSumZ(dst, src *float32, sub float32, n int) float64 { panic("no asm") }

func rotatePairsZ(x, cos, sin *float32, n int) { panic("no asm") }
