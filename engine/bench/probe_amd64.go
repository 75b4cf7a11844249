//go:build amd64 && !purego

package bench

import "golang.org/x/sys/cpu"

// The probes' vector width: AVX-512 when the CPU and OS have it, else AVX2
// (which x/sys/cpu reports only with OS support for ymm registers).
var (
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

//go:noescape
func readAVX512(p *float32, n int) float32

//go:noescape
func readAVX2(p *float32, n int) float32

func fmaAVX512(iters int) float32
func fmaAVX2(iters int) float32

// readSum returns the sum of a (len a multiple of 64) the way membw.c's
// read kernel does: four independent 16-wide accumulators.
func readSum(a []float32) float32 {
	switch {
	case len(a) == 0:
		return 0
	case hasAVX512:
		return readAVX512(&a[0], len(a))
	case hasAVX2:
		return readAVX2(&a[0], len(a))
	}
	return readSumGo(a)
}

// fmaRounds runs iters rounds of the FMA kernel and returns the FLOPs per
// round and a value that depends on every accumulator.
func fmaRounds(iters int) (flopsPerRound int, sink float32) {
	switch {
	case hasAVX512:
		return 16 * 16 * 2, fmaAVX512(iters)
	case hasAVX2:
		return 14 * 8 * 2, fmaAVX2(iters)
	}
	return fmaRoundsGo(iters)
}

// vectorISA names the probes' instruction set.
func vectorISA() string {
	switch {
	case hasAVX512:
		return "avx512"
	case hasAVX2:
		return "avx2"
	}
	return "go"
}
