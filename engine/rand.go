package engine

// Rand is the random stream sampling draws from. Uniform returns the draw of
// one row at one step, in [0, 1).
//
// The stream is addressed by (step, row) rather than consumed in order, so two
// runs with the same stream see the same draw at the same step whatever their
// settings: greedy, T=0.7 and T=1.2 on one stream differ only by their
// settings, and a branch that continues from step k sees the draws the trunk
// would have seen.
type Rand interface {
	Uniform(step, row int) float64
}

// SeededRand is the default stream: a counter-based generator (splitmix64 of
// the seed, step and row), so any draw can be recomputed on its own.
type SeededRand struct {
	Seed uint64
}

// Uniform returns the draw of row at step, in [0, 1) with 53 random bits.
func (r SeededRand) Uniform(step, row int) float64 {
	x := r.Seed ^ 0x9e3779b97f4a7c15
	x = mix64(x + uint64(step)*0xbf58476d1ce4e5b9)
	x = mix64(x + uint64(row)*0x94d049bb133111eb)
	return float64(x>>11) / (1 << 53)
}

// mix64 is splitmix64's finaliser: a bijection that spreads every input bit.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
