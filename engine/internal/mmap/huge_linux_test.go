//go:build linux

package mmap

import "testing"

func TestHuge(t *testing.T) {
	for _, n := range []int{1, 4096, hugePage - 1, hugePage + 1} {
		data, free, err := Huge(n)
		if err != nil {
			t.Fatalf("Huge(%d): %v", n, err)
		}
		if len(data) != n || cap(data) != n {
			t.Errorf("Huge(%d): len %d cap %d, want both %d", n, len(data), cap(data), n)
		}
		if a := addr(data) % hugePage; a != 0 {
			t.Errorf("Huge(%d) starts %d bytes past a huge page, want 0", n, a)
		}
		for i, b := range data {
			if b != 0 {
				t.Fatalf("Huge(%d)[%d] = %d, want zeroed memory", n, i, b)
			}
		}
		data[n-1] = 1 // writable
		if err := free(); err != nil {
			t.Errorf("free: %v", err)
		}
	}
}

func TestProcBytes(t *testing.T) {
	if got := ProcBytes("/proc/meminfo", "MemTotal"); got <= 0 || got%1024 != 0 {
		t.Errorf("MemTotal: got %d, want a positive number of whole KiB", got)
	}
	if got := ProcBytes("/proc/meminfo", "NoSuchField"); got != -1 {
		t.Errorf("a missing field: got %d, want -1", got)
	}
	if got := ProcBytes("/no/such/file", "MemTotal"); got != -1 {
		t.Errorf("a missing file: got %d, want -1", got)
	}
}
