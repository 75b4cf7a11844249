package main

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"tracer/engine/bench"
)

// TestServeBandwidthMatchesBench compares the machine bandwidth that serve's
// traffic panel shows with tracer bench's probe, measured one after the
// other in this process. A probe that reads memory it never wrote reads the
// kernel's zero page and reports several times the real figure; the two
// must agree within 15 %. Other tests running beside this one disturb a
// bandwidth figure, so the pair is measured up to three times and one
// agreeing pair is enough.
func TestServeBandwidthMatchesBench(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory bandwidth")
	}
	var pairs [][2]float64
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		served := measureBandwidth(ctx)
		deadline := time.Now().Add(time.Minute)
		for served() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		page := served()
		if page == 0 {
			t.Fatal("serve's bandwidth probe reported nothing within a minute")
		}
		bw, _, err := bench.ProbeBandwidth(bandwidthProbeBytes, runtime.NumCPU(), 5)
		if err != nil {
			t.Fatal(err)
		}
		probe := bw[len(bw)-1].BestGBps
		pairs = append(pairs, [2]float64{page, probe})
		if math.Abs(page-probe) <= 0.15*probe {
			t.Logf("serve %.1f GB/s, bench %.1f GB/s (%.1f %% apart)", page, probe, 100*math.Abs(page-probe)/probe)
			return
		}
	}
	t.Errorf("serve's bandwidth and bench's probe disagree by more than 15 %% in every try: %v (GB/s, serve then bench)", pairs)
}
