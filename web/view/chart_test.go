package view

import "testing"

func TestChartCacheIsBounded(t *testing.T) {
	c := NewChartCache(3, 1<<20)
	for i := range 5 {
		c.put(chartKey{step: i}, []byte{byte(i)})
	}
	if c.Len() != 3 {
		t.Errorf("got %d charts cached, want 3", c.Len())
	}
	if _, ok := c.get(chartKey{step: 0}); ok {
		t.Error("the oldest chart is still cached")
	}
	c.get(chartKey{step: 2}) // most recently used now
	c.put(chartKey{step: 9}, nil)
	if _, ok := c.get(chartKey{step: 2}); !ok {
		t.Error("a recently used chart was evicted")
	}
	// Bytes bound it too: three charts of 400 bytes in 1000.
	c = NewChartCache(100, 1000)
	for i := range 3 {
		c.put(chartKey{step: i}, make([]byte, 400))
	}
	if _, ok := c.get(chartKey{step: 0}); ok || c.Len() != 2 {
		t.Errorf("got %d charts of 400 bytes cached within 1000 bytes, the oldest still there %v; want 2 and not", c.Len(), ok)
	}
}
