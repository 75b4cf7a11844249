package bench

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"tracer/engine/tensor"
)

// BenchmarkKernelFractions shows what each matrix kernel (tensor.KernelName)
// gets of the machine's two limits, measured in the same run with one and
// two threads: decode (MatVec over SmolLM2-135M's head, 49152×576, far
// larger than any cache) as a fraction of the read bandwidth probe
// ("bw-fraction"), and prefill (MatMul of 64 rows of x against each layer
// weight's shape, its weights coming from DRAM as in a real prefill) as a
// fraction of the FMA peak ("fma-fraction"). On a shared
// machine both limits and kernels move with the load: compare fractions
// from one run, on a quiet machine.
func BenchmarkKernelFractions(b *testing.B) {
	b.Logf("kernels: %s", tensor.KernelName())
	probeBytes := max(4*sysfsCacheBytes(), 256<<20)
	for _, threads := range []int{1, 2} {
		// Many short runs: the best of them is the one least disturbed.
		peak := MeasureFMA(threads, 20, 1_000_000).BestGFLOPS
		bws, _, err := ProbeBandwidth(probeBytes, threads, 3)
		if err != nil {
			b.Fatal(err)
		}
		limit := bws[len(bws)-1].BestGBps
		pool := tensor.NewPool(threads)
		for _, dt := range []tensor.DType{tensor.F32, tensor.BF16, tensor.F16} {
			heads, free := kernelMatrices(b, dt, 49152, 576, 1)
			head := heads[0]
			x, dst := make([]float32, head.Cols), make([]float32, head.Rows)
			b.Run(fmt.Sprintf("decode/%s/49152x576/threads=%d", dt, threads), func(b *testing.B) {
				best := time.Duration(1 << 62)
				for b.Loop() {
					start := time.Now()
					pool.MatVec(dst, head, x)
					best = min(best, time.Since(start))
				}
				gbps := float64(head.Bytes()) / best.Seconds() / 1e9
				gflops := 2 * float64(head.Rows*head.Cols) / best.Seconds() / 1e9
				reportFractions(b, gflops, peak, gbps, limit)
			})
			free()
			for _, sh := range [][2]int{{576, 576}, {1536, 576}, {576, 1536}} {
				// As in a real prefill, each weight comes from DRAM: enough
				// matrices to overflow the last-level cache twice, in turn.
				const n = 64
				count := int(max(2*sysfsCacheBytes(), 64<<20)/int64(sh[0]*sh[1]*dt.Size())) + 1
				ws, free := kernelMatrices(b, dt, sh[0], sh[1], count)
				x, dst := make([]float32, n*sh[1]), make([]float32, n*sh[0])
				for i := range x {
					x[i] = float32(i%17)/17 - 0.5
				}
				b.Run(fmt.Sprintf("prefill/%s/%dx%dx%d/threads=%d", dt, sh[0], sh[1], n, threads), func(b *testing.B) {
					best := time.Duration(1 << 62)
					for b.Loop() {
						start := time.Now()
						for _, w := range ws {
							pool.MatMul(dst, w, x)
						}
						best = min(best, time.Since(start)/time.Duration(count))
					}
					w := ws[0]
					gbps := float64(w.Bytes()) / best.Seconds() / 1e9
					gflops := 2 * float64(n*sh[0]*sh[1]) / best.Seconds() / 1e9
					reportFractions(b, gflops, peak, gbps, limit)
				})
				free()
			}
		}
		pool.Close()
	}
}

// reportFractions reports a kernel's best GFLOP/s and GB/s of weights
// read, and their fractions of the FMA peak and of the read bandwidth.
func reportFractions(b *testing.B, gflops, peak, gbps, limit float64) {
	b.ReportMetric(gflops, "GFLOP/s")
	b.ReportMetric(gflops/peak, "fma-fraction")
	b.ReportMetric(gbps, "GB/s")
	b.ReportMetric(gbps/limit, "bw-fraction")
}

// kernelMatrices returns count random (rows, cols) matrices of dtype, one
// after another in one region of huge pages where possible, as
// arch.NewRandom stores weights, and the function that frees them.
func kernelMatrices(b *testing.B, dt tensor.DType, rows, cols, count int) ([]tensor.Matrix, func()) {
	b.Helper()
	bytes := rows * cols * dt.Size()
	a, free, err := allocFloats((count*bytes + 3) / 4)
	if err != nil {
		b.Fatal(err)
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), count*bytes)
	ms := make([]tensor.Matrix, count)
	for i := range ms {
		part := raw[i*bytes : (i+1)*bytes]
		tensor.FillUniform(part, dt, 0.05, uint64(i+1))
		if ms[i], err = tensor.NewMatrix(part, dt, rows, cols); err != nil {
			free()
			b.Fatal(err)
		}
	}
	return ms, free
}
