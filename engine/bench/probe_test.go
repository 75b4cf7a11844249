package bench

import (
	"testing"
)

func TestReadSum(t *testing.T) {
	for _, n := range []int{64, 128, 64 * 37} {
		a := make([]float32, n)
		var want float32
		for i := range a {
			a[i] = float32(i % 5)
			want += a[i]
		}
		if got := readSum(a); got != want {
			t.Errorf("readSum of %d floats = %v, want %v", n, got, want)
		}
		if got := readSumGo(a); got != want {
			t.Errorf("readSumGo of %d floats = %v, want %v", n, got, want)
		}
	}
}

func TestMeasure(t *testing.T) {
	a, free, err := allocFloats(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	for _, threads := range []int{1, 2} {
		bw := MeasureRead(a, threads, 3)
		if bw.Threads != threads || !(bw.BestGBps >= bw.MedianGBps) || bw.MedianGBps <= 0 {
			t.Errorf("MeasureRead = %+v", bw)
		}
		f := MeasureFMA(threads, 3, 1000)
		if f.Threads != threads || !(f.BestGFLOPS >= f.MedianGFLOPS) || f.MedianGFLOPS <= 0 {
			t.Errorf("MeasureFMA = %+v", f)
		}
	}
	if _, s := fmaRounds(10); s <= 0 {
		t.Errorf("FMA kernel sum %v, want > 0", s)
	}
}

func TestSizeBytes(t *testing.T) {
	for in, want := range map[string]int64{"32768K\n": 32 << 20, "32M": 32 << 20, "1024K": 1 << 20, "512": 512, "": 0, "x": 0, "-5K": 0} {
		if got := sizeBytes(in); got != want {
			t.Errorf("sizeBytes(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestMachineFor: a step that fits in the cache is set against the cache's
// bandwidth, a larger one (or any, with the cache unknown) against main
// memory's.
func TestMachineFor(t *testing.T) {
	m := Machine{DRAM: Bandwidth{MedianGBps: 20}, Cache: Bandwidth{MedianGBps: 90}, CacheBytes: 1 << 20}
	if bw, resident := m.For(600 << 10); !resident || bw.MedianGBps != 90 {
		t.Errorf("600 KiB: %v %v, want the cache's 90 GB/s", bw, resident)
	}
	if bw, resident := m.For(2 << 20); resident || bw.MedianGBps != 20 {
		t.Errorf("2 MiB: %v %v, want main memory's 20 GB/s", bw, resident)
	}
	m.CacheBytes = 0
	if _, resident := m.For(1); resident {
		t.Error("with the cache unknown, a step counts as cache-resident")
	}
}
