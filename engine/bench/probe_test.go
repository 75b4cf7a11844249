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
