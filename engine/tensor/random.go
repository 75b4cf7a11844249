package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// FillUniform fills dst, little-endian elements of dtype, with values
// uniform in [-scale, scale) (rounded to the dtype) from a xorshift
// generator seeded by seed: random weights for benchmarks and tests, a
// few hundred megabytes a second per core. The result depends only on the
// arguments, not on the number of goroutines that fill it.
func FillUniform(dst []byte, dtype DType, scale float32, seed uint64) {
	size := dtype.Size()
	if size == 0 || len(dst)%size != 0 {
		panic(fmt.Sprintf("tensor: FillUniform of %d bytes of %s", len(dst), dtype))
	}
	const block = 1 << 20 // bytes per independently seeded block
	blocks := (len(dst) + block - 1) / block
	workers := min(runtime.GOMAXPROCS(0), blocks)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := w; b < blocks; b += workers {
				fillBlock(dst[b*block:min((b+1)*block, len(dst))], dtype, scale, seed+uint64(b)*0x9e3779b97f4a7c15)
			}
		}()
	}
	wg.Wait()
}

// fillBlock fills one block from its own xorshift64* stream, 24 random
// bits per value.
func fillBlock(dst []byte, dtype DType, scale float32, seed uint64) {
	x := seed | 1
	mul := scale * (2.0 / (1 << 24))
	size := dtype.Size()
	for i := 0; i+size <= len(dst); i += size {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		v := float32((x*0x2545f4914f6cdd1d)>>40)*mul - scale // [-scale, scale)
		switch dtype {
		case F32:
			binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(v))
		case BF16:
			binary.LittleEndian.PutUint16(dst[i:], F32ToBF16(v))
		case F16:
			binary.LittleEndian.PutUint16(dst[i:], F32ToF16(v))
		}
	}
}
