package tensor

import (
	"encoding/binary"
	"fmt"
)

// FillQuantUniform fills dst, whole blocks of a Q8_0 or Q4_0 matrix, with
// random weights of about the spread of FillUniform's [-scale, scale):
// every block scale is scale/127 (Q8_0) or scale/8 (Q4_0) in binary16, and
// the quantized values uniform over their range from a xorshift generator
// seeded by seed. The same arguments give the same bytes.
func FillQuantUniform(dst []byte, dtype DType, scale float32, seed uint64) {
	_, bytes := dtype.Block()
	if dtype != Q8_0 && dtype != Q4_0 || len(dst)%bytes != 0 {
		panic(fmt.Sprintf("tensor: FillQuantUniform of %d bytes of %s", len(dst), dtype))
	}
	d := F32ToF16(scale / 127)
	if dtype == Q4_0 {
		d = F32ToF16(scale / 8)
	}
	x := seed | 1
	var r uint64 // random bytes, 8 per xorshift step
	for off := 0; off < len(dst); off += bytes {
		binary.LittleEndian.PutUint16(dst[off:], d)
		for j := 2; j < bytes; j++ {
			if (j-2)%8 == 0 {
				x ^= x >> 12
				x ^= x << 25
				x ^= x >> 27
				r = x * 0x2545f4914f6cdd1d
			}
			v := byte(r >> (8 * ((j - 2) % 8)))
			if dtype == Q8_0 && v == 0x80 {
				v = 0x81 // -127: Q8_0 values lie in [-127, 127]
			}
			dst[off+j] = v
		}
	}
}
