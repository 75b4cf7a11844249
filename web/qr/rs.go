package qr

// Reed–Solomon error correction over GF(256), as QR codes use it: the
// field's elements are bytes, polynomials over GF(2) modulo
// x⁸+x⁴+x³+x²+1 (0x11D), with α = 2 generating every nonzero element.

// gfPoly is the field's reducing polynomial, x⁸+x⁴+x³+x²+1.
const gfPoly = 0x11D

// mul multiplies two field elements: carry-less multiplication reduced by
// gfPoly, one bit of b at a time (Russian peasant).
func mul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 == 1 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= gfPoly & 0xFF
		}
		b >>= 1
	}
	return p
}

// exp returns αⁿ.
func exp(n int) byte {
	x := byte(1)
	for range n % 255 {
		x = mul(x, 2)
	}
	return x
}

// generator returns the generator polynomial of n error correction
// codewords, (x−α⁰)(x−α¹)…(x−αⁿ⁻¹), as its n+1 coefficients, highest
// power first (the first is 1). In GF(256) subtraction is addition (xor).
func generator(n int) []byte {
	g := []byte{1}
	for i := range n {
		root := exp(i)
		next := make([]byte, len(g)+1)
		for j, c := range g { // next = g·x + g·root
			next[j] ^= c
			next[j+1] ^= mul(c, root)
		}
		g = next
	}
	return g
}

// remainder returns the error correction codewords of a block: the
// remainder of data(x)·xⁿ divided by gen (n = len(gen)−1), highest power
// first. Appended to data, it makes a codeword that every root of gen
// zeroes.
func remainder(data, gen []byte) []byte {
	n := len(gen) - 1
	r := make([]byte, n) // (n,): the running remainder, highest power first
	for _, d := range data {
		f := d ^ r[0]
		copy(r, r[1:])
		r[n-1] = 0
		for i := range n {
			r[i] ^= mul(gen[i+1], f)
		}
	}
	return r
}
