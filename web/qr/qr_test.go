package qr

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"tracer/web/qr/qrtest"
)

// TestFormatBits: level M's format information for each mask, as the
// standard's annex C lists it (mask 0 is 101010000010010, the xor mask
// itself: level M is 00 and mask 0 is 000, whose check bits are zero).
func TestFormatBits(t *testing.T) {
	want := []string{
		"101010000010010", "101000100100101", "101111001111100", "101101101001011",
		"100010111111001", "100000011001110", "100111110010111", "100101010100000",
	}
	for mask, w := range want {
		if got := fmt.Sprintf("%015b", formatBits(mask)); got != w {
			t.Errorf("mask %d: got %s, want %s", mask, got, w)
		}
	}
}

// TestVersionBits: the version information of versions 7 to 10, from the
// standard's annex D.
func TestVersionBits(t *testing.T) {
	for v, want := range map[int]uint{7: 0x07C94, 8: 0x085BC, 9: 0x09A99, 10: 0x0A4D3} {
		if got := versionBits(v); got != want {
			t.Errorf("version %d: got %#05x, want %#05x", v, got, want)
		}
	}
}

// TestField: α⁸ = α⁴+α³+α²+1 (0x1D, the reduction), α²⁵⁵ = 1, and every
// nonzero element has an inverse.
func TestField(t *testing.T) {
	if got := exp(8); got != 0x1D {
		t.Errorf("α^8: got %#x, want 0x1d", got)
	}
	if got := exp(255); got != 1 {
		t.Errorf("α^255: got %d, want 1", got)
	}
	for a := 1; a < 256; a++ {
		found := false
		for b := 1; b < 256 && !found; b++ {
			found = mul(byte(a), byte(b)) == 1
		}
		if !found {
			t.Fatalf("%d has no inverse", a)
		}
	}
}

// TestGenerator: the generator polynomials of 7 and 10 error correction
// codewords, as the standard's annex A lists their coefficients'
// exponents of α, highest power first.
func TestGenerator(t *testing.T) {
	for n, exps := range map[int][]int{
		7:  {0, 87, 229, 146, 149, 238, 102, 21},
		10: {0, 251, 67, 46, 61, 118, 70, 64, 94, 32, 45},
	} {
		g := generator(n)
		if len(g) != len(exps) {
			t.Fatalf("%d: got %d coefficients, want %d", n, len(g), len(exps))
		}
		for i, e := range exps {
			if g[i] != exp(e) {
				t.Errorf("%d codewords, coefficient %d: got %d, want α^%d = %d", n, i, g[i], e, exp(e))
			}
		}
	}
}

// TestRemainder: the error correction codewords of the data codewords of
// "HELLO WORLD" in version 1-M (alphanumeric mode, the example worked
// through in Thonky's QR code tutorial), and, for random blocks, that the
// whole codeword vanishes at every root of the generator.
func TestRemainder(t *testing.T) {
	data := []byte{32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17}
	want := []byte{196, 35, 39, 119, 235, 215, 231, 226, 93, 23}
	if got := remainder(data, generator(10)); !bytes.Equal(got, want) {
		t.Errorf("HELLO WORLD 1-M: got %v, want %v", got, want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{10, 16, 18, 22, 24, 26} {
		block := make([]byte, 1+r.IntN(60))
		for i := range block {
			block[i] = byte(r.UintN(256))
		}
		cw := append(block, remainder(block, generator(n))...)
		for root := range n {
			var v byte
			for _, c := range cw {
				v = mul(v, exp(root)) ^ c
			}
			if v != 0 {
				t.Errorf("%d codewords: the codeword at α^%d is %d, want 0", n, root, v)
			}
		}
	}
}

// TestCodewords: "A" in version 1-M is 0100 (byte mode), 00000001 (one
// byte), 01000001, the terminator 0000, then pad bytes: 0x40 0x14 0x10
// 0xEC 0x11 ….
func TestCodewords(t *testing.T) {
	got := codewords(1, []byte("A"))
	want := []byte{0x40, 0x14, 0x10, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC}
	if !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

// TestCapacity: the byte-mode capacities at level M of the standard's
// table 7; data of a version's capacity takes that version, a byte more
// the next, and more than version 10 holds is ErrTooLong.
func TestCapacity(t *testing.T) {
	caps := []int{14, 26, 42, 62, 84, 106, 122, 152, 180, 213}
	for i, c := range caps {
		v := i + 1
		if got := Capacity(v); got != c {
			t.Errorf("version %d: capacity %d, want %d", v, got, c)
		}
		code, err := Encode(bytes.Repeat([]byte("x"), c))
		if err != nil || code.Version != v || code.Size != 17+4*v {
			t.Errorf("%d bytes: got %+v, %v, want version %d", c, code, err, v)
		}
		if v < MaxVersion {
			if code, err := Encode(bytes.Repeat([]byte("x"), c+1)); err != nil || code.Version != v+1 {
				t.Errorf("%d bytes: got %+v, %v, want version %d", c+1, code, err, v+1)
			}
		}
	}
	if _, err := Encode(make([]byte, 214)); !errors.Is(err, ErrTooLong) {
		t.Errorf("214 bytes: got %v, want ErrTooLong", err)
	}
}

// TestPatterns checks, without decoding, that every version's function
// patterns sit where the standard puts them: three finders with light
// separators, timing patterns along row and column 6, the alignment
// patterns of annex E, the dark module at (8, 4v+9), the format
// information of the code's mask in both places and the version
// information; and that the modules left for data hold the version's
// codewords (table 1) and its remainder bits.
func TestPatterns(t *testing.T) {
	total := []int{26, 44, 70, 100, 134, 172, 196, 242, 292, 346}
	remainderBits := []int{0, 7, 7, 7, 7, 7, 0, 0, 0, 0}
	centres := [][]int{nil, {6, 18}, {6, 22}, {6, 26}, {6, 30}, {6, 34}, {6, 22, 38}, {6, 24, 42}, {6, 26, 46}, {6, 28, 50}}
	for v := 1; v <= MaxVersion; v++ {
		t.Run(strconv.Itoa(v), func(t *testing.T) {
			c, err := Encode(bytes.Repeat([]byte{0xA5}, Capacity(v)))
			if err != nil || c.Version != v {
				t.Fatalf("got %+v, %v", c, err)
			}
			n := c.Size
			for _, corner := range [][2]int{{0, 0}, {n - 7, 0}, {0, n - 7}} { // (x, y) of a finder's top-left module
				for dy := -1; dy <= 7; dy++ {
					for dx := -1; dx <= 7; dx++ {
						x, y := corner[0]+dx, corner[1]+dy
						if x < 0 || y < 0 || x >= n || y >= n {
							continue
						}
						inside := dx >= 0 && dx <= 6 && dy >= 0 && dy <= 6
						want := inside && (dx == 0 || dx == 6 || dy == 0 || dy == 6 || dx >= 2 && dx <= 4 && dy >= 2 && dy <= 4)
						if c.Dark(x, y) != want {
							t.Errorf("finder at %v: module (%d, %d) dark %v, want %v", corner, x, y, !want, want)
						}
					}
				}
			}
			for i := 8; i < n-8; i++ {
				if c.Dark(i, 6) != (i%2 == 0) || c.Dark(6, i) != (i%2 == 0) {
					t.Errorf("timing at %d: row 6 dark %v, column 6 dark %v, want %v", i, c.Dark(i, 6), c.Dark(6, i), i%2 == 0)
				}
			}
			aligned := 0
			for _, y := range centres[v-1] {
				for _, x := range centres[v-1] {
					if x < 9 && y < 9 || x > n-10 && y < 9 || x < 9 && y > n-10 {
						continue
					}
					aligned++
					for dy := -2; dy <= 2; dy++ {
						for dx := -2; dx <= 2; dx++ {
							want := max(abs(dx), abs(dy)) != 1
							if c.Dark(x+dx, y+dy) != want {
								t.Errorf("alignment at (%d, %d): module (%d, %d) dark %v, want %v", x, y, x+dx, y+dy, !want, want)
							}
						}
					}
				}
			}
			if want := []int{0, 1, 1, 1, 1, 1, 6, 6, 6, 6}[v-1]; aligned != want {
				t.Errorf("%d alignment patterns, want %d", aligned, want)
			}
			if !c.Dark(8, 4*v+9) {
				t.Error("the dark module (8, 4v+9) is light")
			}
			// Format: bit 14 first along row 8 from the left, then up column 8;
			// bits 14 to 8 up column 8 from the bottom, 7 to 0 along row 8 to the right.
			var first, second uint
			for _, p := range [][2]int{{0, 8}, {1, 8}, {2, 8}, {3, 8}, {4, 8}, {5, 8}, {7, 8}, {8, 8}, {8, 7}, {8, 5}, {8, 4}, {8, 3}, {8, 2}, {8, 1}, {8, 0}} {
				first = first<<1 | uint(b2i(c.Dark(p[0], p[1])))
			}
			for k := range 7 {
				second = second<<1 | uint(b2i(c.Dark(8, n-1-k)))
			}
			for k := range 8 {
				second = second<<1 | uint(b2i(c.Dark(n-8+k, 8)))
			}
			if want := formatBits(c.Mask); first != want || second != want {
				t.Errorf("format %015b and %015b, want %015b (mask %d)", first, second, want, c.Mask)
			}
			if v >= 7 {
				var tr, bl uint // top-right block, bottom-left block
				for k := 17; k >= 0; k-- {
					tr = tr<<1 | uint(b2i(c.Dark(n-11+k%3, k/3)))
					bl = bl<<1 | uint(b2i(c.Dark(k/3, n-11+k%3)))
				}
				if want := versionBits(v); tr != want || bl != want {
					t.Errorf("version information %018b and %018b, want %018b", tr, bl, want)
				}
			}
			m := newMatrix(v)
			free := 0
			for _, f := range m.fixed {
				if !f {
					free++
				}
			}
			if want := total[v-1]*8 + remainderBits[v-1]; free != want {
				t.Errorf("%d data modules, want %d (%d codewords, %d remainder bits)", free, want, total[v-1], remainderBits[v-1])
			}
			if b := levelM[v]; b.dataCodewords()+(b.g1+b.g2)*b.ec != total[v-1] {
				t.Errorf("the block table holds %d codewords, want %d", b.dataCodewords()+(b.g1+b.g2)*b.ec, total[v-1])
			}
		})
	}
}

// TestPenalty: the four rules on lines and matrices scored by hand.
func TestPenalty(t *testing.T) {
	line := func(s string) (func(int) bool, int) { return func(k int) bool { return s[k] == '1' }, len(s) }
	for _, c := range []struct {
		line      string
		run, find int
	}{
		{"1111", 0, 0},
		{"11111", 3, 0},
		{"111111", 4, 0},
		{"1111011111", 3, 0},
		{"000000000000000000000", 19, 0},
		{"10111010000", 0, 40},        // four light modules are no run for N1
		{"00001011101", 0, 40},        // a run of four light, then the pattern
		{"000010111010000", 0, 80},    // both sides
		{"1011101000", 0, 0},          // only three light after
		{"10110110000", 0, 0},         // 1:1:2:1:2, not 1:1:3:1:1
		{"100000101110100000", 6, 80}, // two runs of five light, the pattern between them
	} {
		at, n := line(c.line)
		if got := runPenalty(at, n); got != c.run {
			t.Errorf("%s: N1 %d, want %d", c.line, got, c.run)
		}
		if got := finderPenalty(at, n); got != c.find {
			t.Errorf("%s: N3 %d, want %d", c.line, got, c.find)
		}
	}
	const n = 21
	dark := make([]bool, n*n)
	for i := range dark {
		dark[i] = true
	}
	// N1: 42 lines of one run of 21 (3+16 each); N2: 20×20 blocks; N4: 100 % dark.
	if got, want := penalty(dark, n), 42*19+400*3+10*10; got != want {
		t.Errorf("all dark: got %d, want %d", got, want)
	}
	for i := range dark {
		dark[i] = (i/n+i%n)%2 == 0
	}
	if got := penalty(dark, n); got != 0 { // a checkerboard, 221 of 441 dark
		t.Errorf("checkerboard: got %d, want 0", got)
	}
}

// TestMaskHasTheLowestPenalty: the mask Encode picks scores no more than
// any other.
func TestMaskHasTheLowestPenalty(t *testing.T) {
	for _, s := range []string{"", "http://127.0.0.1:8080/", "http://[2001:db8::5]:18434/", string(bytes.Repeat([]byte("ab"), 100))} {
		c, err := Encode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		score := penalty(c.dark, c.Size)
		for k := range 8 {
			o, err := encode([]byte(s), k)
			if err != nil {
				t.Fatal(err)
			}
			if p := penalty(o.dark, o.Size); p < score || p == score && k < c.Mask {
				t.Errorf("%.20q: mask %d scores %d, below the chosen mask %d's %d", s, k, p, c.Mask, score)
			}
		}
	}
}

// matrixOf returns a code's modules as rows, for the decoder.
func matrixOf(c *Code) [][]bool {
	m := make([][]bool, c.Size)
	for y := range m {
		m[y] = make([]bool, c.Size)
		for x := range m[y] {
			m[y][x] = c.Dark(x, y)
		}
	}
	return m
}

// TestRoundTrip decodes codes of every version and every mask with
// qrtest's decoder, which shares no code with the encoder, and gets the
// bytes back.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	inputs := [][]byte{nil, []byte("http://127.0.0.1:8080/"), []byte("http://[2001:db8::5]:18434/"), []byte("छात्र यह पता खोलें")}
	for v := 1; v <= MaxVersion; v++ {
		b := make([]byte, Capacity(v))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		for mask := -1; mask < 8; mask++ {
			c, err := encode(in, mask)
			if err != nil {
				t.Fatal(err)
			}
			got, err := qrtest.Decode(matrixOf(c))
			if err != nil {
				t.Errorf("%d bytes, version %d, mask %d: %v", len(in), c.Version, c.Mask, err)
				continue
			}
			if !bytes.Equal(got, in) {
				t.Errorf("%d bytes, version %d, mask %d: decoded %q, want %q", len(in), c.Version, c.Mask, got, in)
			}
		}
	}
}

// TestDecoderNoticesDamage: the decoder that the round trip trusts is not
// blind: a data module flipped fails the Reed–Solomon check, a format
// module flipped fails the format check.
func TestDecoderNoticesDamage(t *testing.T) {
	c, err := Encode([]byte("http://127.0.0.1:8080/"))
	if err != nil {
		t.Fatal(err)
	}
	m := matrixOf(c)
	m[c.Size-1][c.Size-1] = !m[c.Size-1][c.Size-1] // the first data bit
	if _, err := qrtest.Decode(m); err == nil {
		t.Error("a flipped data module: decoded without error")
	}
	m = matrixOf(c)
	m[8][0] = !m[8][0] // format bit 14
	if _, err := qrtest.Decode(m); err == nil {
		t.Error("a flipped format module: decoded without error")
	}
}

// TestDarkOutside: the quiet zone around the symbol is light.
func TestDarkOutside(t *testing.T) {
	c, err := Encode([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]int{{-1, 0}, {0, -1}, {c.Size, 0}, {0, c.Size}, {-4, -4}} {
		if c.Dark(p[0], p[1]) {
			t.Errorf("module %v outside the symbol is dark", p)
		}
	}
}

// FuzzEncode: any bytes up to the capacity encode and decode back; more
// is ErrTooLong; nothing panics.
func FuzzEncode(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("http://192.168.1.5:8080/"))
	f.Add(bytes.Repeat([]byte{0}, 213))
	f.Add(bytes.Repeat([]byte{0xFF}, 214))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Encode(data)
		if len(data) > Capacity(MaxVersion) {
			if !errors.Is(err, ErrTooLong) || c != nil {
				t.Fatalf("%d bytes: got %v, %v, want ErrTooLong", len(data), c, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%d bytes: %v", len(data), err)
		}
		got, err := qrtest.Decode(matrixOf(c))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: decoded %q, %v", len(data), got, err)
		}
	})
}
