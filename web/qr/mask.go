package qr

// The eight masks and the penalty that picks one (ISO/IEC 18004, 7.8).

// masked reports whether mask k flips the module at column x, row y
// (the standard writes i for the row, j for the column).
func masked(k, x, y int) bool {
	switch k {
	case 0:
		return (x+y)%2 == 0
	case 1:
		return y%2 == 0
	case 2:
		return x%3 == 0
	case 3:
		return (x+y)%3 == 0
	case 4:
		return (y/2+x/3)%2 == 0
	case 5:
		return x*y%2+x*y%3 == 0
	case 6:
		return (x*y%2+x*y%3)%2 == 0
	case 7:
		return ((x+y)%2+x*y%3)%2 == 0
	}
	panic("qr: mask out of range")
}

// applyMask flips the data modules (every module but the function ones)
// that mask k selects; applying it twice undoes it.
func (m *matrix) applyMask(k int) {
	for y := range m.size {
		for x := range m.size {
			if !m.fixed[y*m.size+x] && masked(k, x, y) {
				m.dark[y*m.size+x] = !m.dark[y*m.size+x]
			}
		}
	}
}

// bestMask tries the eight masks, each with its format drawn, and returns
// the one of the lowest penalty (the first of equals). It leaves the
// matrix unmasked.
func (m *matrix) bestMask() int {
	best, bestScore := 0, -1
	for k := range 8 {
		m.applyMask(k)
		m.drawFormat(k)
		if p := penalty(m.dark, m.size); bestScore < 0 || p < bestScore {
			best, bestScore = k, p
		}
		m.applyMask(k)
	}
	return best
}

// Penalty weights of the four rules.
const (
	penaltyRun    = 3  // N1: a run of five like modules in a row or column, plus one a module beyond
	penaltyBlock  = 3  // N2: a 2×2 block of like modules
	penaltyFinder = 40 // N3: 1:1:3:1:1 (dark:light:dark:light:dark) beside four light modules
	penaltyShade  = 10 // N4: every full 5 % the dark share strays from 50 %
)

// penalty scores a (size, size) row-major matrix by the four rules; the
// encoder keeps the mask of the lowest score.
func penalty(dark []bool, size int) int {
	at := func(x, y int) bool { return dark[y*size+x] }
	p := 0
	for i := range size {
		row := func(k int) bool { return at(k, i) }
		col := func(k int) bool { return at(i, k) }
		p += runPenalty(row, size) + runPenalty(col, size)
		p += finderPenalty(row, size) + finderPenalty(col, size)
	}
	for y := range size - 1 {
		for x := range size - 1 {
			c := at(x, y)
			if at(x+1, y) == c && at(x, y+1) == c && at(x+1, y+1) == c {
				p += penaltyBlock
			}
		}
	}
	n := 0
	for _, d := range dark {
		if d {
			n++
		}
	}
	total := size * size
	// |dark/total − 1/2| in steps of 5 %, rounded down: |20·n − 10·total| / total.
	return p + penaltyShade*(abs(20*n-10*total)/total)
}

// runPenalty is rule N1 along one line of n modules: each run of k ≥ 5
// like modules costs 3 + (k − 5).
func runPenalty(at func(int) bool, n int) int {
	p, run := 0, 1
	for k := 1; k <= n; k++ {
		if k < n && at(k) == at(k-1) {
			run++
			continue
		}
		if run >= 5 {
			p += penaltyRun + run - 5
		}
		run = 1
	}
	return p
}

// finderPenalty is rule N3 along one line of n modules: each place where
// 1011101 0000 or 0000 1011101 (1 dark) lies wholly inside the line.
func finderPenalty(at func(int) bool, n int) int {
	const a, b = 0b10111010000, 0b00001011101 // the 11 modules, the first the most significant bit
	p, window := 0, 0
	for k := range n {
		window = (window<<1)&0x7FF | b2i(at(k))
		if k >= 10 && (window == a || window == b) {
			p += penaltyFinder
		}
	}
	return p
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
