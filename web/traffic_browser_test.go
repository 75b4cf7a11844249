package web

import (
	"runtime"
	"strings"
	"testing"

	"tracer/engine/bench"
)

// TestBrowserTrafficSaysCacheResident (issue 37, point 1): with the
// machine measured by the server's own probe, stories260K's traffic panel
// says its step is cache-resident (its 1 MB of weights fit in any CPU's
// cache) and sets the step against the cache's bandwidth, with when the
// bandwidth was measured and its spread.
func TestBrowserTrafficSaysCacheResident(t *testing.T) {
	skipShort(t)
	m, err := bench.ProbeMachine(runtime.NumCPU(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if m.CacheBytes == 0 {
		t.Fatalf("the probe found no CPU cache: %+v", m)
	}
	url, _ := serve(t, Config{ModelsDir: realModels(t), Machine: func() bench.Machine { return m }}, nil)
	ctx := browser(t)
	open(t, ctx, url)
	fillRun(t, ctx, form{"model": "stories260K/stories260K.bin", "prompt": "Once upon a time", "max_new_tokens": "6", "do_sample": "false"})
	runAndWait(t, ctx, "run-generate", "done")
	got := evalJS[map[string]string](t, ctx, `({
		resident: document.querySelector("[data-testid=machine-bandwidth]").dataset.resident,
		bandwidth: document.querySelector("[data-testid=machine-bandwidth]").textContent,
		where: document.querySelector("[data-testid=traffic-where]")?.textContent ?? "",
		probe: document.querySelector("[data-testid=machine-probe]")?.textContent ?? "",
	})`)
	if got["resident"] != "true" || !strings.HasSuffix(got["bandwidth"], "GB/s (CPU cache)") || !strings.HasPrefix(got["where"], "Cache-resident") {
		t.Errorf("stories260K's traffic panel: %v; want it cache-resident, set against the cache's bandwidth (the probe found a %d KiB cache)", got, m.CacheBytes>>10)
	}
	if !strings.Contains(got["probe"], "passes") || !strings.Contains(got["probe"], m.At.Format("15:04")) {
		t.Errorf("the probe note %q, want when and over how many passes", got["probe"])
	}
}
