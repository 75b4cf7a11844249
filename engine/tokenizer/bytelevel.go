package tokenizer

// GPT-2's byte-level BPE writes every byte as a printable character
// (bytes_to_unicode in openai/gpt-2's encoder.py): the 188 printable
// Latin-1 bytes stand for themselves and the other 68 bytes map, in
// increasing order, to U+0100..U+0143 (so a space is 'Ġ', U+0120, and a
// newline 'Ċ', U+010A). The two functions below compute that table.

// byteLevelRune returns the character byte-level BPE uses for byte b.
func byteLevelRune(b byte) rune {
	switch {
	case b >= 0x21 && b <= 0x7E, b >= 0xA1 && b <= 0xAC, b >= 0xAE:
		return rune(b)
	case b <= 0x20: // 33 control bytes and the space: n = 0..32
		return 0x100 + rune(b)
	case b <= 0xA0: // 0x7F..0xA0: n = 33..66
		return 0x100 + 33 + rune(b-0x7F)
	default: // 0xAD, the soft hyphen: n = 67
		return 0x100 + 67
	}
}

// byteLevelByte is the inverse of byteLevelRune; ok is false for characters
// outside the 256-entry table.
func byteLevelByte(r rune) (b byte, ok bool) {
	switch {
	case r >= 0x21 && r <= 0x7E, r >= 0xA1 && r <= 0xAC, r >= 0xAE && r <= 0xFF:
		return byte(r), true
	case r >= 0x100 && r < 0x100+33:
		return byte(r - 0x100), true
	case r >= 0x100+33 && r < 0x100+67:
		return byte(0x7F + r - 0x100 - 33), true
	case r == 0x100+67:
		return 0xAD, true
	}
	return 0, false
}

// byteLevelString maps every byte of s to its byte-level character.
func byteLevelString(s string) string {
	out := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = byteLevelRune(s[i])
	}
	return string(out)
}

// appendUnByteLevel appends the bytes that token's byte-level characters
// stand for. Like Hugging Face's ByteLevel decoder, a token with a character
// outside the table is kept as its own UTF-8 bytes.
func appendUnByteLevel(dst []byte, token string) []byte {
	n := len(dst)
	for _, r := range token {
		b, ok := byteLevelByte(r)
		if !ok {
			return append(dst[:n], token...)
		}
		dst = append(dst, b)
	}
	return dst
}

// utf8Lead describes a UTF-8 lead byte: the sequence length n (0 when b can
// not start a sequence) and the allowed range of the second byte (RFC 3629,
// table 3-7 of the Unicode standard).
func utf8Lead(b byte) (n int, lo, hi byte) {
	switch {
	case b >= 0xC2 && b <= 0xDF:
		return 2, 0x80, 0xBF
	case b == 0xE0:
		return 3, 0xA0, 0xBF
	case b >= 0xE1 && b <= 0xEC, b == 0xEE, b == 0xEF:
		return 3, 0x80, 0xBF
	case b == 0xED:
		return 3, 0x80, 0x9F
	case b == 0xF0:
		return 4, 0x90, 0xBF
	case b >= 0xF1 && b <= 0xF3:
		return 4, 0x80, 0xBF
	case b == 0xF4:
		return 4, 0x80, 0x8F
	}
	return 0, 0, 0
}

// validPrefix returns how many bytes of src, starting at its lead byte, form
// a (possibly incomplete) well-formed UTF-8 sequence, and the full length the
// lead byte announces. It returns 0, 0 when src[0] is not a lead byte.
func validPrefix(src []byte) (have, want int) {
	if len(src) == 0 {
		return 0, 0
	}
	n, lo, hi := utf8Lead(src[0])
	if n == 0 {
		return 0, 0
	}
	have = 1
	for have < n && have < len(src) {
		c := src[have]
		if have > 1 {
			lo, hi = 0x80, 0xBF
		}
		if c < lo || c > hi {
			break
		}
		have++
	}
	return have, n
}

// appendLossy appends src to dst with every ill-formed sequence replaced by
// U+FFFD, one per maximal ill-formed subpart: the policy of Rust's
// String::from_utf8_lossy, which Hugging Face's ByteLevel decoder uses (Go's
// strings.ToValidUTF8 merges runs instead, and range loops replace per byte).
func appendLossy(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		if src[i] < 0x80 {
			dst = append(dst, src[i])
			i++
			continue
		}
		have, want := validPrefix(src[i:])
		switch {
		case want == 0:
			dst = append(dst, "\uFFFD"...)
			i++
		case have == want:
			dst = append(dst, src[i:i+have]...)
			i += have
		default:
			dst = append(dst, "\uFFFD"...)
			i += have
		}
	}
	return dst
}

// incompleteTail returns the length of the well-formed but unfinished UTF-8
// sequence at the end of b (0 when b ends on a character boundary or with
// bytes that can never become valid).
func incompleteTail(b []byte) int {
	start := len(b) - 3
	if start < 0 {
		start = 0
	}
	for p := start; p < len(b); p++ {
		have, want := validPrefix(b[p:])
		if want > 0 && have == len(b)-p && have < want {
			return have
		}
	}
	return 0
}
