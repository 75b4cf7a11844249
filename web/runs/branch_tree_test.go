package runs

import (
	"testing"

	"tracer/trace"
)

// treeOf is a run whose branches leave the given parents (branch i+1
// leaves parents[i]).
func treeOf(parents ...int) *Run {
	t := &trace.Trace{}
	for i, p := range parents {
		t.Branches = append(t.Branches, trace.Branch{ID: i + 1, Parent: p, Label: string(rune('a' + i))})
	}
	return &Run{Trace: t}
}

// TestBranchTreeIsPreorder: the tree lists each branch after its parent
// and before its parent's later children, children in the trace's order,
// with their depth.
func TestBranchTreeIsPreorder(t *testing.T) {
	//	trunk ─ 1 ─ 3
	//	      │   └ 4 ─ 5
	//	      └ 2
	v := branchTree(treeOf(0, 0, 1, 1, 4), 4)
	want := []struct{ id, depth int }{{0, 0}, {1, 1}, {3, 2}, {4, 2}, {5, 3}, {2, 1}}
	if len(v.Nodes) != len(want) {
		t.Fatalf("got %d nodes, want %d", len(v.Nodes), len(want))
	}
	for i, w := range want {
		n := v.Nodes[i]
		if n.ID != w.id || n.Depth != w.depth || n.Selected != (w.id == 4) {
			t.Errorf("node %d: got id %d depth %d selected %v, want id %d depth %d", i, n.ID, n.Depth, n.Selected, w.id, w.depth)
		}
	}
}

// BenchmarkBranchTree builds the tree of 60,000 branches (a chain and a
// fan): one pass over the branches, not one per node.
func BenchmarkBranchTree(b *testing.B) {
	parents := make([]int, 60000)
	for i := range parents {
		if i%2 == 1 {
			parents[i] = i // a chain: branch i+1 leaves branch i
		}
	}
	r := treeOf(parents...)
	for b.Loop() {
		branchTree(r, 0)
	}
}
