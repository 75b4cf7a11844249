package arch

import (
	"runtime"
	"sync"
	"unsafe"

	"tracer/engine/internal/mmap"
)

// hugeKVBytes is the smallest cache whose keys and values go into huge
// pages. A decode step reads a layer's keys and values (tens to hundreds
// of KiB per kv head) cold from memory, after the layer weights have
// streamed through the caches. In 4 KiB pages every page of them was a TLB
// miss: at SmolLM2-135M's shape with 128 positions, attention took 0.83 ms
// of a 12 ms BF16 step, against 0.66 ms in huge pages. Below one huge page
// the storage stays in the Go heap, which wastes nothing.
var hugeKVBytes = 2 << 20

// hugeKV reports whether the kernel hands out transparent huge pages on
// request.
var hugeKV = sync.OnceValue(func() bool {
	mode := mmap.THPMode()
	return mode == "always" || mode == "madvise"
})

// kvMapped accounts for the caches' huge-page mappings, which the garbage
// collector does not see: bytes mapped and not yet unmapped, and the
// figure past which kvStorage runs a collection first, so that the
// cleanups of caches nobody holds unmap theirs before more is mapped (as
// the heap's own pacing does for the Go heap). That figure is twice the
// bytes mapped (at least kvGCFloor): set when a collection runs, lowered
// as cleanups unmap, so it follows what is really held.
var kvMapped struct {
	sync.Mutex
	bytes, nextGC int64
}

// kvGCFloor is the least that kvMapped lets grow before a collection.
const kvGCFloor = 256 << 20

// kvStorage returns n zeroed float32s for owner's keys and values. From
// hugeKVBytes on, where the kernel allows, they are an anonymous mapping
// in huge pages (mmap.Huge), unmapped by a cleanup once owner is
// unreachable: nothing may keep a slice of them past owner (Keys and
// Values alias them for as long as the cache is held). Otherwise, or if
// the mapping fails, they come from the Go heap.
func kvStorage(owner *Cache, n int) []float32 {
	bytes := int64(n) * 4
	if bytes < int64(hugeKVBytes) || !hugeKV() {
		return make([]float32, n)
	}
	kvMapped.Lock()
	collect := kvMapped.bytes+bytes > max(kvMapped.nextGC, kvGCFloor)
	kvMapped.Unlock()
	if collect {
		runtime.GC()      // queues the cleanups of unreachable caches
		runtime.Gosched() // and lets them run, even on one CPU
	}
	mem, free, err := mmap.Huge(int(bytes))
	if err != nil {
		return make([]float32, n)
	}
	kvMapped.Lock()
	kvMapped.bytes += bytes
	if collect {
		kvMapped.nextGC = 2 * kvMapped.bytes
	}
	kvMapped.Unlock()
	runtime.AddCleanup(owner, func(bytes int64) {
		_ = free()
		kvMapped.Lock()
		kvMapped.bytes -= bytes
		kvMapped.nextGC = min(kvMapped.nextGC, 2*kvMapped.bytes)
		kvMapped.Unlock()
	}, bytes)
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), n)
}
