package arch

import (
	"fmt"

	"tracer/engine"
)

// maxCacheBytes bounds one cache's allocation: a larger request is a
// mistake, not a plan.
const maxCacheBytes = 1 << 40

// Cache is a Model's KV cache: for every layer and row, the keys (after
// RoPE) and values of each position held, float32. It implements
// engine.Cache. Slots are absolute positions in the row's padded sequence
// (transformers' cache_position), pads included.
type Cache struct {
	rows, capacity, n        int // n: positions held per row
	layers, kvHeads, headDim int

	k, v [][][]float32 // [layers][rows] → (kvHeads, capacity, headDim)

	claimed []bool      // (rows) scratch of Reorder: source rows taken
	orig    [][]float32 // (rows) scratch of Reorder: row storage before it
	spare   [][]float32 // (≤ rows) scratch of Reorder: storage no row takes
	s       scratch     // the buffers of Forward calls on this cache
	pass    pass        // the state of the current Forward call
	wait    waiter      // the current Forward call waiting for its pass (batch.go)
	note    batchNote   // the pass the last Forward call ran in
}

func newCache(d dims, rows, capacity int) (*Cache, error) {
	if rows < 1 || capacity < 1 {
		return nil, fmt.Errorf("arch: new cache: %d rows of %d positions: both must be at least 1", rows, capacity)
	}
	per := d.kvBytesPerToken()
	if int64(capacity) > maxCacheBytes/per/int64(rows) {
		return nil, fmt.Errorf("arch: new cache: %d rows of %d positions at %d bytes each is too large", rows, capacity, per)
	}
	c := &Cache{rows: rows, capacity: capacity, layers: d.layers, kvHeads: d.kvHeads, headDim: d.headDim}
	c.alloc()
	return c, nil
}

// alloc gives c zeroed storage for the keys and values of every layer and
// row, in one block (kvStorage) laid out in the order a decode step reads
// it: per layer, per row, the keys (kvHeads, capacity, headDim) then the
// values.
func (c *Cache) alloc() {
	each := c.kvHeads * c.capacity * c.headDim
	buf := kvStorage(c, 2*c.layers*c.rows*each)
	c.k, c.v = make([][][]float32, c.layers), make([][][]float32, c.layers)
	for l := range c.layers {
		c.k[l], c.v[l] = make([][]float32, c.rows), make([][]float32, c.rows)
		for r := range c.rows {
			c.k[l][r], buf = buf[:each:each], buf[each:]
			c.v[l][r], buf = buf[:each:each], buf[each:]
		}
	}
}

// Len returns the positions held per row.
func (c *Cache) Len() int { return c.n }

// Rows returns the number of rows.
func (c *Cache) Rows() int { return c.rows }

// Capacity returns the most positions a row can hold.
func (c *Cache) Capacity() int { return c.capacity }

// LayerBytes returns the bytes of keys and values each layer holds for the
// positions in use, all rows together: rows·Len·kvHeads·headDim·4·2.
func (c *Cache) LayerBytes() []int64 {
	out := make([]int64, c.layers)
	for l := range out {
		out[l] = int64(c.rows) * int64(c.n) * int64(c.kvHeads*c.headDim) * 4 * 2
	}
	return out
}

// Keys returns the cached key of a position, (headDim), for tests and
// inspection; it aliases the cache.
func (c *Cache) Keys(layer, row, kvHead, pos int) []float32 {
	return c.at(c.k, layer, row, kvHead, pos)
}

// Values returns the cached value of a position, like Keys.
func (c *Cache) Values(layer, row, kvHead, pos int) []float32 {
	return c.at(c.v, layer, row, kvHead, pos)
}

func (c *Cache) at(kv [][][]float32, layer, row, kvHead, pos int) []float32 {
	if pos < 0 || pos >= c.n || kvHead < 0 || kvHead >= c.kvHeads {
		panic(fmt.Sprintf("arch: cache position %d of kv head %d, cache holds %d positions of %d heads", pos, kvHead, c.n, c.kvHeads))
	}
	off := (kvHead*c.capacity + pos) * c.headDim
	return kv[layer][row][off : off+c.headDim]
}

// Reorder makes row i a copy of row src[i] for every row, as beam search
// reorders its beams (transformers' index_select on the batch axis). Rows
// are swapped where possible and copied only when a source row is taken
// twice. src must hold Rows() indices in [0, Rows()); anything else is a
// programmer error and panics.
func (c *Cache) Reorder(src []int) {
	if len(src) != c.rows {
		panic(fmt.Sprintf("arch: Reorder with %d sources for %d rows", len(src), c.rows))
	}
	for _, s := range src {
		if s < 0 || s >= c.rows {
			panic(fmt.Sprintf("arch: Reorder source %d outside [0, %d)", s, c.rows))
		}
	}
	if c.claimed == nil {
		c.claimed = make([]bool, c.rows)
		c.orig = make([][]float32, c.rows)
		c.spare = make([][]float32, 0, c.rows)
	}
	for l := 0; l < c.layers; l++ {
		c.reorder(c.k[l], src)
		c.reorder(c.v[l], src)
	}
}

// reorder permutes one layer's rows: the first row to take a source gets its
// storage, later ones get a copy in the storage of a row nobody takes.
func (c *Cache) reorder(rows [][]float32, src []int) {
	copy(c.orig, rows)
	clear(c.claimed)
	for _, s := range src {
		c.claimed[s] = true
	}
	c.spare = c.spare[:0]
	for r, taken := range c.claimed {
		if !taken {
			c.spare = append(c.spare, c.orig[r])
		}
	}
	clear(c.claimed)
	for i, s := range src {
		if !c.claimed[s] {
			c.claimed[s] = true
			rows[i] = c.orig[s]
			continue
		}
		buf := c.spare[len(c.spare)-1]
		c.spare = c.spare[:len(c.spare)-1]
		c.copyPositions(buf, c.orig[s])
		rows[i] = buf
	}
}

// copyPositions copies the positions in use of one row's storage.
func (c *Cache) copyPositions(dst, src []float32) {
	for g := 0; g < c.kvHeads; g++ {
		off := g * c.capacity * c.headDim
		copy(dst[off:off+c.n*c.headDim], src[off:off+c.n*c.headDim])
	}
}

// Truncate keeps the first n positions of every row; n outside [0, Len()]
// panics.
func (c *Cache) Truncate(n int) {
	if n < 0 || n > c.n {
		panic(fmt.Sprintf("arch: Truncate(%d) of a cache holding %d positions", n, c.n))
	}
	c.n = n
}

// Clone returns an independent copy with the same capacity.
func (c *Cache) Clone() engine.Cache {
	d := &Cache{rows: c.rows, capacity: c.capacity, n: c.n, layers: c.layers, kvHeads: c.kvHeads, headDim: c.headDim}
	d.alloc()
	for l := 0; l < c.layers; l++ {
		for r := 0; r < c.rows; r++ {
			d.copyPositions(d.k[l][r], c.k[l][r])
			d.copyPositions(d.v[l][r], c.v[l][r])
		}
	}
	return d
}
