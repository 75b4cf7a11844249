package web

// fifoCache keeps at most max values by key and drops the oldest put first
// (put, not read: the caches it serves are small and refilled cheaply). It
// has no lock of its own: its owner holds one around every call.
type fifoCache[V any] struct {
	max   int
	byKey map[string]V
	order []string // keys, oldest first
}

func newFIFOCache[V any](max int) *fifoCache[V] {
	return &fifoCache[V]{max: max, byKey: map[string]V{}}
}

// get returns the value kept for key, if any.
func (c *fifoCache[V]) get(key string) (V, bool) {
	v, ok := c.byKey[key]
	return v, ok
}

// put keeps v for key, dropping the oldest keys beyond max.
func (c *fifoCache[V]) put(key string, v V) {
	if _, ok := c.byKey[key]; !ok {
		c.order = append(c.order, key)
	}
	c.byKey[key] = v
	for len(c.order) > c.max {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
}
