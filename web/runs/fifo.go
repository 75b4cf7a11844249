package runs

// FIFO keeps at most max values by key and drops the oldest put first
// (put, not read: the caches it serves are small and refilled cheaply). It
// has no lock of its own: its owner holds one around every call.
type FIFO[V any] struct {
	max   int
	byKey map[string]V
	order []string // keys, oldest first
}

func NewFIFO[V any](max int) *FIFO[V] {
	return &FIFO[V]{max: max, byKey: map[string]V{}}
}

// Get returns the value kept for key, if any.
func (c *FIFO[V]) Get(key string) (V, bool) {
	v, ok := c.byKey[key]
	return v, ok
}

// Put keeps v for key, dropping the oldest keys beyond max.
func (c *FIFO[V]) Put(key string, v V) {
	if _, ok := c.byKey[key]; !ok {
		c.order = append(c.order, key)
	}
	c.byKey[key] = v
	for len(c.order) > c.max {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
}
