//go:build !amd64 || purego

package bench

// Without the assembly the probes run the pure-Go loops: the numbers then
// measure what Go code gets, not the machine.

func readSum(a []float32) float32 { return readSumGo(a) }

func fmaRounds(iters int) (int, float32) { return fmaRoundsGo(iters) }

func vectorISA() string { return "go" }
