package arch

import (
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// hugeStorage makes every cache of the test take kvStorage's huge-page
// path, however small, and skips where the kernel gives no transparent
// huge pages.
func hugeStorage(t *testing.T) {
	t.Helper()
	if !hugeKV() {
		t.Skip("the kernel gives no transparent huge pages (not Linux, or THP is never)")
	}
	old := hugeKVBytes
	hugeKVBytes = 0
	t.Cleanup(func() { hugeKVBytes = old })
}

func mapped() int64 {
	kvMapped.Lock()
	defer kvMapped.Unlock()
	return kvMapped.bytes
}

// TestCacheHugeStorage runs the cache tests with keys and values in a
// huge-page mapping, laid out per layer and row, keys then values.
func TestCacheHugeStorage(t *testing.T) {
	hugeStorage(t)
	m := openTestModel(t, tinyShape("llama"))
	before := mapped()
	c, err := m.NewCache(2, 8)
	if err != nil {
		t.Fatal(err)
	}
	ours := c.(*Cache)
	if got := mapped() - before; got != int64(len(ours.k)*2*2*len(ours.k[0][0])*4) {
		t.Errorf("the cache mapped %d bytes, want its keys and values", got)
	}
	if a := uintptr(unsafe.Pointer(&ours.k[0][0][0])); a%(2<<20) != 0 {
		t.Errorf("storage at %#x, not on a huge page", a)
	}
	if unsafe.Add(unsafe.Pointer(&ours.k[0][0][0]), 4*len(ours.k[0][0])) != unsafe.Pointer(&ours.v[0][0][0]) {
		t.Error("layer 0, row 0: the values do not follow the keys")
	}
	runtime.KeepAlive(c)
	t.Run("OffRecompute", TestCacheOffRecomputeMatches)
	t.Run("TruncateAndClone", TestCacheTruncateAndClone)
	t.Run("Reorder", TestCacheReorder)
}

// TestCacheHugeStorageUnmapped drops caches without closing them, as
// engine.Generate and the server do: their mappings are unmapped once
// unreachable, and kvStorage collects before the mappings of dropped
// caches pile up.
func TestCacheHugeStorageUnmapped(t *testing.T) {
	hugeStorage(t)
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	base := mapped()
	d := dims{layers: 16, kvHeads: 4, headDim: 64}
	const capacity = 1024 // 16 layers · 2 · 4 heads · 1024 · 64 · 4 B = 32 MiB
	size := int64(2 * d.layers * d.kvHeads * capacity * d.headDim * 4)
	most := int64(0)
	for range 96 { // 3 GiB in all, never touched
		c, err := newCache(d, 1, capacity)
		if err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(c)
		most = max(most, mapped()-base)
	}
	// kvGCFloor when the cleanups keep up (they run on another goroutine,
	// and may lag, as under the race detector: then the bound doubles).
	if bound := 4*kvGCFloor + size; most > bound {
		t.Errorf("up to %d MiB mapped by caches nobody holds, want at most %d", most>>20, bound>>20)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mapped() != base && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if left := mapped() - base; left != 0 {
		t.Errorf("%d MiB still mapped after the caches became unreachable", left>>20)
	}
}
