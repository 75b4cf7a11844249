package tokenizer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Llama2C is a llama2.c tokenizer (tokenizer.bin, tok512.bin): a list of
// token strings with scores, encoded and decoded exactly as llama2.c's run.c
// does. Ids 0, 1 and 2 are <unk>, BOS and EOS; ids 3..258 are the bytes
// <0x00>..<0xFF>. An Llama2C is safe for concurrent use.
type Llama2C struct {
	pieces []string  // id -> token, as stored (llama2.c writes ▁ as a space)
	scores []float32 // id -> merge score; higher merges first
	ids    map[string]int
	// MaxTokenLength is the header's longest token, in bytes.
	MaxTokenLength int
}

// LoadLlama2C reads a llama2.c tokenizer file.
func LoadLlama2C(path string) (*Llama2C, error) {
	return parseFile(path, ParseLlama2C)
}

// ParseLlama2C reads the llama2.c tokenizer format (little endian):
//
//	int32 max_token_length
//	then per token, to the end of the file:
//	float32 score, int32 len, len bytes
func ParseLlama2C(data []byte) (*Llama2C, error) {
	if len(data) < 4 {
		return nil, errors.New("too short for a llama2.c tokenizer (no header)")
	}
	t := &Llama2C{MaxTokenLength: int(int32(binary.LittleEndian.Uint32(data))), ids: map[string]int{}}
	if t.MaxTokenLength <= 0 || t.MaxTokenLength > 1<<16 {
		return nil, fmt.Errorf("bad max_token_length %d: not a llama2.c tokenizer?", t.MaxTokenLength)
	}
	for off := 4; off < len(data); {
		id := len(t.pieces)
		if len(data)-off < 8 {
			return nil, fmt.Errorf("token %d: record truncated at byte %d", id, off)
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		n := int(int32(binary.LittleEndian.Uint32(data[off+4:])))
		off += 8
		if n < 0 || n > len(data)-off {
			return nil, fmt.Errorf("token %d: length %d runs past the end of the file", id, n)
		}
		piece := string(data[off : off+n])
		off += n
		t.pieces = append(t.pieces, piece)
		t.scores = append(t.scores, score)
		if _, dup := t.ids[piece]; !dup {
			t.ids[piece] = id // run.c's binary search finds one of equal strings; take the first
		}
	}
	if len(t.pieces) < 3 {
		return nil, fmt.Errorf("%d tokens; want at least <unk>, BOS and EOS", len(t.pieces))
	}
	return t, nil
}

// Encode returns the ids of text as run.c's encode(t, text, bos, eos=0):
// BOS when addSpecial, the id of " " (the dummy prefix) when text is not
// empty, each UTF-8 character's token or its bytes as <0xNN> (id byte+3),
// then, repeatedly, the adjacent pair whose joined string is a token with
// the highest score (leftmost on ties) is merged. Unlike C, a NUL byte does
// not end the text.
func (t *Llama2C) Encode(text string, addSpecial bool) ([]int, error) {
	var ids []int
	if addSpecial {
		ids = append(ids, 1)
	}
	if text != "" {
		space, ok := t.ids[" "]
		if !ok {
			return nil, errors.New(`tokenizer: llama2.c encode: the vocabulary has no " " token for the dummy prefix`)
		}
		ids = append(ids, space)
	}
	var buf []byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c&0xC0 != 0x80 {
			buf = buf[:0]
		}
		buf = append(buf, c)
		if i+1 < len(text) && text[i+1]&0xC0 == 0x80 && len(buf) < 4 {
			continue
		}
		if id, ok := t.ids[string(buf)]; ok {
			ids = append(ids, id)
		} else {
			for _, b := range buf {
				if int(b)+3 >= len(t.pieces) {
					return nil, fmt.Errorf("tokenizer: llama2.c encode: byte 0x%02X has no <0x%02X> token", b, b)
				}
				ids = append(ids, int(b)+3)
			}
		}
		buf = buf[:0]
	}
	return t.merge(ids), nil
}

// merge runs run.c's merge loop: while some adjacent pair joins into a
// token whose score is above -1e10, merge the pair with the highest score,
// the leftmost on ties. run.c rescans every pair for each merge, which is
// quadratic in the length of a word; this keeps the candidate pairs in a
// max-heap over a linked list of the ids instead, so n ids take O(n log n):
// a merge changes two pairs and pushes at most two, and entries for pairs
// that have changed since are dropped when they come to the top.
// mergeWork (for the tests) counts the pairs looked up and the heap entries
// pushed and popped.
func (t *Llama2C) merge(ids []int) []int {
	out, _ := t.mergeWork(ids)
	return out
}

// mergeCand is a candidate merge of the tokens a and b at list nodes left
// and right (node i starts with the i-th id of the input) into the token id.
type mergeCand struct {
	score       float32
	left, right int32
	a, b, id    int32
}

// before orders the heap: the higher score first, then the leftmost pair.
func (a mergeCand) before(b mergeCand) bool {
	return a.score > b.score || a.score == b.score && a.left < b.left
}

func (t *Llama2C) mergeWork(ids []int) ([]int, int) {
	n := len(ids)
	if n < 2 {
		return ids, 0
	}
	work := 0
	next := make([]int32, n) // node -> next live node, -1 at the end
	prev := make([]int32, n) // node -> previous live node, -1 at the start
	dead := make([]bool, n)  // merged into its left neighbour
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	next[n-1] = -1
	var heap []mergeCand
	var buf []byte
	push := func(left, right int32) {
		work++
		buf = append(append(buf[:0], t.pieces[ids[left]]...), t.pieces[ids[right]]...)
		id, ok := t.ids[string(buf)]
		// run.c starts from best_score = -1e10 and needs a score above it
		// (so never a NaN).
		if !ok || !(t.scores[id] > float32(-1e10)) {
			return
		}
		heap = append(heap, mergeCand{t.scores[id], left, right, int32(ids[left]), int32(ids[right]), int32(id)})
		heapUp(heap, len(heap)-1)
	}
	for i := 0; i+1 < n; i++ {
		push(int32(i), int32(i+1))
	}
	for len(heap) > 0 {
		work++
		c := heap[0]
		last := len(heap) - 1
		heap[0] = heap[last]
		heap = heap[:last]
		heapDown(heap, 0)
		// Stale: a side was merged away, or into another token. A pair
		// that is still adjacent and holds the same two tokens is the pair
		// the entry was made for, whatever happened in between.
		if dead[c.left] || dead[c.right] || next[c.left] != c.right ||
			ids[c.left] != int(c.a) || ids[c.right] != int(c.b) {
			continue
		}
		ids[c.left] = int(c.id)
		dead[c.right] = true
		next[c.left] = next[c.right]
		if r := next[c.right]; r >= 0 {
			prev[r] = c.left
		}
		// The pairs on both sides changed; their old entries are stale now.
		if p := prev[c.left]; p >= 0 {
			push(p, c.left)
		}
		if r := next[c.left]; r >= 0 {
			push(c.left, r)
		}
	}
	out := ids[:0]
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, ids[i])
	}
	return out, work
}

func heapUp(h []mergeCand, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func heapDown(h []mergeCand, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// byteToken parses the <0xNN> form run.c's decode recognises.
func byteToken(piece string) (byte, bool) {
	if len(piece) != 6 || piece[:3] != "<0x" || piece[5] != '>' || !isHex(piece[3]) || !isHex(piece[4]) {
		return 0, false
	}
	b, ok := fallbackByte(piece)
	return b, ok
}

// Decode returns the text of ids as run.c's decode prints it: a token after
// BOS loses its leading space and <0xNN> tokens are raw bytes. The result is
// not checked for valid UTF-8, as run.c prints bytes. skipSpecial drops
// <unk>, BOS and EOS.
func (t *Llama2C) Decode(ids []int, skipSpecial bool) (string, error) {
	var out []byte
	prev := -1
	for _, id := range ids {
		if id < 0 || id >= len(t.pieces) {
			return "", fmt.Errorf("tokenizer: decode: id %d is outside the vocabulary (size %d)", id, len(t.pieces))
		}
		piece := t.pieces[id]
		if prev == 1 && len(piece) > 0 && piece[0] == ' ' {
			piece = piece[1:]
		}
		prev = id
		if skipSpecial && t.IsSpecial(id) {
			continue
		}
		if b, ok := byteToken(piece); ok {
			out = append(out, b)
		} else {
			out = append(out, piece...)
		}
	}
	return string(out), nil
}

// Token returns the stored string of id ("" when out of range); BOS is
// "\n<s>\n" as llama2.c's export writes it.
func (t *Llama2C) Token(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// TokenID returns the id of a token string.
func (t *Llama2C) TokenID(token string) (int, bool) {
	id, ok := t.ids[token]
	return id, ok
}

// Score returns the merge score of id (0 when out of range).
func (t *Llama2C) Score(id int) float32 {
	if id < 0 || id >= len(t.scores) {
		return 0
	}
	return t.scores[id]
}

// TokenBytes returns the bytes id stands for: the byte of a <0xNN> token,
// else the stored string.
func (t *Llama2C) TokenBytes(id int) []byte {
	if id < 0 || id >= len(t.pieces) {
		return nil
	}
	if b, ok := byteToken(t.pieces[id]); ok {
		return []byte{b}
	}
	return []byte(t.pieces[id])
}

// VocabSize is the number of tokens in the file.
func (t *Llama2C) VocabSize() int { return len(t.pieces) }

// Specials returns BOS 1, EOS 2 and UNK 0, as run.c assumes; no PAD.
func (t *Llama2C) Specials() Specials { return Specials{BOS: 1, EOS: 2, PAD: -1, UNK: 0} }

// IsSpecial reports whether id is <unk>, BOS or EOS.
func (t *Llama2C) IsSpecial(id int) bool { return id >= 0 && id <= 2 }
