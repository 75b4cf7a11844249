package qr

// The matrix: the function patterns (finders, separators, timing,
// alignment, the dark module, the format and version areas) and the
// codewords' bits laid between them.

// matrix is a symbol being drawn.
type matrix struct {
	version, size int
	dark          []bool // (size, size) row-major: the modules
	fixed         []bool // (size, size) row-major: function modules, which data and masks leave alone
}

// newMatrix draws a version's function patterns, with the format and
// version areas reserved (the format is drawn once the mask is chosen).
func newMatrix(version int) *matrix {
	size := 17 + 4*version
	m := &matrix{version: version, size: size, dark: make([]bool, size*size), fixed: make([]bool, size*size)}
	for i := range size { // timing: alternate along row 6 and column 6, dark first
		m.set(6, i, i%2 == 0)
		m.set(i, 6, i%2 == 0)
	}
	m.finder(3, 3)
	m.finder(size-4, 3)
	m.finder(3, size-4)
	pos := alignment[version]
	last := len(pos) - 1
	for i, y := range pos {
		for j, x := range pos {
			if i == 0 && j == 0 || i == 0 && j == last || i == last && j == 0 {
				continue // under a finder
			}
			m.align(x, y)
		}
	}
	m.drawFormat(0) // reserves the areas; drawn again with the mask chosen
	m.drawVersion()
	return m
}

// alignment lists the rows (and columns) of a version's alignment
// pattern centres (ISO/IEC 18004, annex E); every pair of them holds one,
// except those under the finders.
var alignment = [MaxVersion + 1][]int{
	{}, {},
	{6, 18}, {6, 22}, {6, 26}, {6, 30}, {6, 34},
	{6, 22, 38}, {6, 24, 42}, {6, 26, 46}, {6, 28, 50},
}

// set draws a function module at column x, row y.
func (m *matrix) set(x, y int, dark bool) {
	m.dark[y*m.size+x] = dark
	m.fixed[y*m.size+x] = true
}

// finder draws a finder pattern centred at (cx, cy) with its light
// separator: rings at Chebyshev distance 0–1 and 3 dark, 2 and 4 light,
// clipped to the symbol.
func (m *matrix) finder(cx, cy int) {
	for dy := -4; dy <= 4; dy++ {
		for dx := -4; dx <= 4; dx++ {
			x, y := cx+dx, cy+dy
			if x < 0 || y < 0 || x >= m.size || y >= m.size {
				continue
			}
			d := max(abs(dx), abs(dy))
			m.set(x, y, d != 2 && d != 4)
		}
	}
}

// align draws a 5×5 alignment pattern centred at (cx, cy): dark centre,
// light ring, dark ring.
func (m *matrix) align(cx, cy int) {
	for dy := -2; dy <= 2; dy++ {
		for dx := -2; dx <= 2; dx++ {
			m.set(cx+dx, cy+dy, max(abs(dx), abs(dy)) != 1)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// formatBits is the 15-bit format information of level M and a mask:
// level M's two bits (00) and the mask's three, their BCH(15,5) check bits
// (generator x¹⁰+x⁸+x⁵+x⁴+x²+x+1, 0x537), xor 0x5412 so that no format
// reads all light.
func formatBits(mask int) uint {
	const levelMBits = 0b00
	data := uint(levelMBits<<3 | mask)
	rem := data
	for range 10 {
		rem = rem<<1 ^ (rem>>9)*0x537
	}
	return (data<<10 | rem&0x3FF) ^ 0x5412
}

// versionBits is the 18-bit version information: the version's six bits
// and their BCH(18,6) check bits (generator 0x1F25).
func versionBits(version int) uint {
	rem := uint(version)
	for range 12 {
		rem = rem<<1 ^ (rem>>11)*0x1F25
	}
	return uint(version)<<12 | rem&0xFFF
}

// drawFormat draws the format information of mask twice, bit 0 the least
// significant. Around the top-left finder: down column 8 from the top
// (bits 0–5, then 6 and 7 at rows 7 and 8, skipping the timing row), then
// leftward along row 8 (bit 8 at column 7, bits 9–14 at columns 5 to 0).
// Split between the other two finders: leftward along row 8 from the
// right edge (bits 0–7), and down column 8 (bits 8–14 at rows size−7 to
// size−1), below the dark module at (8, size−8).
func (m *matrix) drawFormat(mask int) {
	bits := formatBits(mask)
	bit := func(i int) bool { return bits>>i&1 == 1 }
	for i := range 6 {
		m.set(8, i, bit(i))
	}
	m.set(8, 7, bit(6))
	m.set(8, 8, bit(7))
	m.set(7, 8, bit(8))
	for i := 9; i < 15; i++ {
		m.set(14-i, 8, bit(i))
	}
	for i := range 8 {
		m.set(m.size-1-i, 8, bit(i))
	}
	for i := 8; i < 15; i++ {
		m.set(8, m.size-15+i, bit(i))
	}
	m.set(8, m.size-8, true) // the dark module
}

// drawVersion draws the version information of versions 7 and up, twice:
// a 6×3 block above the bottom-left finder and its transpose left of the
// top-right finder, bit i at row i/3, column size−11+i%3 of the latter.
func (m *matrix) drawVersion() {
	if m.version < 7 {
		return
	}
	bits := versionBits(m.version)
	for i := range 18 {
		dark := bits>>i&1 == 1
		a, b := m.size-11+i%3, i/3
		m.set(a, b, dark)
		m.set(b, a, dark)
	}
}

// place lays the codewords' bits, most significant first, in the modules
// that are not function modules: in pairs of columns from the right edge,
// up the first pair, down the next, and so on, the right column of a pair
// before the left, skipping column 6 (the timing pattern). Modules left
// over (the remainder bits) stay light.
func (m *matrix) place(words []byte) {
	i, n := 0, len(words)*8
	for right := m.size - 1; right >= 1; right -= 2 {
		if right == 6 {
			right = 5
		}
		up := (right+1)&2 == 0
		for k := range m.size {
			y := k
			if up {
				y = m.size - 1 - k
			}
			for x := right; x >= right-1; x-- {
				if m.fixed[y*m.size+x] || i >= n {
					continue
				}
				m.dark[y*m.size+x] = words[i/8]>>(7-i%8)&1 == 1
				i++
			}
		}
	}
}
