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
// traffic panel shows with tracer bench's probe, measured back to back in
// this process. A probe that reads memory it never wrote reads the kernel's
// zero page and reports several times the real figure, in every try; the
// two must agree within 15 %. Other tests running beside this one (go test
// runs packages in parallel on a 2-core machine) move a bandwidth figure by
// more than that from one second to the next, so the pair is measured up to
// ten times and one agreeing pair is enough.
func TestServeBandwidthMatchesBench(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory bandwidth")
	}
	var pairs [][2]float64
	for try := range 10 {
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
		pairs = append(pairs, [2]float64{math.Round(page*10) / 10, math.Round(probe*10) / 10})
		if math.Abs(page-probe) <= 0.15*probe {
			t.Logf("try %d: serve %.1f GB/s, bench %.1f GB/s (%.1f %% apart)", try+1, page, probe, 100*math.Abs(page-probe)/probe)
			return
		}
	}
	t.Errorf("serve's bandwidth and bench's probe disagree by more than 15 %% in every try: %v (GB/s, serve then bench)", pairs)
}
