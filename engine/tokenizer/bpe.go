package tokenizer

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"
)

// bpe is Hugging Face's BPE model: a vocabulary and ranked merges.
type bpe struct {
	vocab  map[string]int
	tokens []string // id -> token
	known  []bool   // id -> whether some token has the id
	// merges maps a pair of ids (pairKey) to the merge's rank (its line in
	// the merges list, lower merges first) and the id of the merged token.
	merges map[uint64]bpeMerge

	unk          int    // id of unk_token, -1 when none
	unkToken     string // unk_token, also when it is missing from the vocab
	fuseUnk      bool   // runs of unknown characters become one unk
	byteFallback bool   // unknown characters become <0xNN> tokens
	ignoreMerges bool   // a piece that is a whole token is kept as is
	prefix       string // continuing_subword_prefix ("" for none)
	suffix       string // end_of_word_suffix ("" for none)

	fallbackIDs  [256]int32 // id of <0xNN> per byte, -1 when absent
	byteLevelIDs [256]int32 // id of each byte's byte-level character, -1 when absent

	cache wordCache
}

type bpeMerge struct{ rank, id int32 }

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// newBPE builds the model; merges are pairs of token strings in rank order.
// With a continuing_subword_prefix, "a" and "##b" merge into "ab".
func newBPE(vocab map[string]int, merges [][2]string, prefix, suffix string) (*bpe, error) {
	m := &bpe{vocab: vocab, unk: -1, prefix: prefix, suffix: suffix,
		merges: make(map[uint64]bpeMerge, len(merges))}
	maxID := -1
	for tok, id := range vocab {
		// Ids index dense arrays: a few gaps are fine, but one huge id in a
		// small file must not cost gigabytes.
		if id < 0 || id > 2*len(vocab)+1024 {
			return nil, fmt.Errorf("vocab: token %q has id %d, outside 0..%d (the vocab has %d tokens; ids this sparse are not supported)",
				tok, id, 2*len(vocab)+1024, len(vocab))
		}
		maxID = max(maxID, id)
	}
	m.tokens = make([]string, maxID+1)
	m.known = make([]bool, maxID+1)
	for tok, id := range vocab {
		// Two strings with one id: keep the smaller, so loading is deterministic.
		if !m.known[id] || tok < m.tokens[id] {
			m.tokens[id], m.known[id] = tok, true
		}
	}
	for rank, mg := range merges {
		a, okA := vocab[mg[0]]
		b, okB := vocab[mg[1]]
		if !okA || !okB {
			return nil, fmt.Errorf("merge %d (%q %q): token not in vocab", rank+1, mg[0], mg[1])
		}
		right := mg[1]
		if prefix != "" && len(right) >= len(prefix) && right[:len(prefix)] == prefix {
			right = right[len(prefix):]
		}
		id, ok := vocab[mg[0]+right]
		if !ok {
			return nil, fmt.Errorf("merge %d (%q %q): %q not in vocab", rank+1, mg[0], mg[1], mg[0]+right)
		}
		// A repeated pair keeps its last rank, as Hugging Face's map does.
		m.merges[pairKey(int32(a), int32(b))] = bpeMerge{rank: int32(rank), id: int32(id)}
	}
	for b := 0; b < 256; b++ {
		m.fallbackIDs[b], m.byteLevelIDs[b] = -1, -1
		if id, ok := vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.fallbackIDs[b] = int32(id)
		}
		if id, ok := vocab[string(byteLevelRune(byte(b)))]; ok {
			m.byteLevelIDs[b] = int32(id)
		}
	}
	return m, nil
}

// wordCache remembers the ids of pieces the model has seen (Hugging Face's
// BPE cache). It is safe for concurrent use.
type wordCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

const (
	cacheCapacity = 1 << 16 // entries; when full, new words are not cached
	cacheMaxWord  = 256     // bytes; longer pieces are not cached
)

func (c *wordCache) get(word string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[word]
	c.mu.RUnlock()
	return ids, ok
}

func (c *wordCache) put(word string, ids []int32) {
	if len(word) > cacheMaxWord {
		return
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string][]int32)
	}
	if len(c.m) < cacheCapacity {
		c.m[string([]byte(word))] = ids // copy: word may point into a large input
	}
	c.mu.Unlock()
}

// bpeSymbol is one symbol of a word being merged; symbols form a linked list
// over their original positions.
type bpeSymbol struct {
	id         int32
	prev, next int32
	gone       bool // merged into the symbol on its left
}

// bpeCand is a merge waiting in the queue: rank, then position, decide.
type bpeCand struct {
	rank, pos, id int32
}

// bpeWork is the scratch space of one Encode call.
type bpeWork struct {
	syms       []bpeSymbol
	heap       []bpeCand
	unkPending int32 // an unk waiting for the next known character
	unkSet     bool
}

var errUnkMissing = errors.New("unk_token is not in the vocabulary")

// tokenize appends the ids of one piece. The cache holds the final answer
// for a piece, whichever way it was found.
func (m *bpe) tokenize(dst []int, p piece, w *bpeWork) ([]int, error) {
	if p.text == "" {
		return dst, nil
	}
	if ids, ok := m.cache.get(p.text); ok {
		for _, id := range ids {
			dst = append(dst, int(id))
		}
		return dst, nil
	}
	if m.ignoreMerges {
		whole := p.text
		if p.bytes {
			whole = byteLevelString(p.text)
		}
		if id, ok := m.vocab[whole]; ok {
			m.cache.put(p.text, []int32{int32(id)})
			return append(dst, id), nil
		}
	}
	if err := m.initWord(p, w); err != nil {
		return dst, err
	}
	m.mergeAll(w)
	ids := make([]int32, 0, len(w.syms))
	for _, s := range w.syms {
		if !s.gone {
			ids = append(ids, s.id)
			dst = append(dst, int(s.id))
		}
	}
	m.cache.put(p.text, ids)
	return dst, nil
}

// initWord splits the piece into characters and looks each up, as
// BPE::merge_word does: unknown characters become byte-fallback tokens or
// the unk token (fused into one when fuse_unk is set), or are dropped.
func (m *bpe) initWord(p piece, w *bpeWork) error {
	w.syms = w.syms[:0]
	w.unkSet = false
	var utf8buf [utf8.UTFMax]byte
	for i := 0; i < len(p.text); {
		var unit string
		size := 1
		if p.bytes {
			if id := m.byteLevelIDs[p.text[i]]; id >= 0 && m.prefix == "" && m.suffix == "" {
				w.known(id) // the common case: no string to build
				i++
				continue
			}
			n := utf8.EncodeRune(utf8buf[:], byteLevelRune(p.text[i]))
			unit = string(utf8buf[:n])
		} else {
			_, size = utf8.DecodeRuneInString(p.text[i:])
			unit = p.text[i : i+size]
		}
		if i > 0 && m.prefix != "" {
			unit = m.prefix + unit
		}
		if i+size == len(p.text) && m.suffix != "" {
			unit += m.suffix
		}
		i += size
		if err := m.addUnit(w, unit); err != nil {
			return err
		}
	}
	if w.unkSet {
		w.push(w.unkPending)
	}
	if n := len(w.syms); n > 0 {
		w.syms[n-1].next = -1
	}
	return nil
}

// addUnit adds the symbol(s) of one character (with any prefix or suffix).
func (m *bpe) addUnit(w *bpeWork, unit string) error {
	if id, ok := m.vocab[unit]; ok {
		w.known(int32(id))
		return nil
	}
	if m.byteFallback && m.allFallback(unit) {
		// Like Hugging Face, a pending unk is not flushed first.
		for j := 0; j < len(unit); j++ {
			w.push(m.fallbackIDs[unit[j]])
		}
		return nil
	}
	if m.unkToken == "" {
		return nil // no unk token: the character is dropped
	}
	if m.unk < 0 {
		return fmt.Errorf("bpe: %w (%q)", errUnkMissing, m.unkToken)
	}
	switch {
	case w.unkSet && m.fuseUnk:
	case w.unkSet:
		w.push(w.unkPending)
	default:
		w.unkPending, w.unkSet = int32(m.unk), true
	}
	return nil
}

// push appends a symbol linked to its neighbours.
func (w *bpeWork) push(id int32) {
	n := int32(len(w.syms))
	w.syms = append(w.syms, bpeSymbol{id: id, prev: n - 1, next: n + 1})
}

// known appends a character found in the vocabulary, after any pending unk.
func (w *bpeWork) known(id int32) {
	if w.unkSet {
		w.push(w.unkPending)
		w.unkSet = false
	}
	w.push(id)
}

func (m *bpe) allFallback(unit string) bool {
	for j := 0; j < len(unit); j++ {
		if m.fallbackIDs[unit[j]] < 0 {
			return false
		}
	}
	return true
}

// mergeAll applies merges lowest rank first (leftmost among equal ranks)
// until none applies. It follows Word::merge_all exactly, including how it
// tells a stale queue entry: by the id the pair would merge into.
func (m *bpe) mergeAll(w *bpeWork) {
	syms := w.syms
	h := w.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if mg, ok := m.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			h = heapPush(h, bpeCand{rank: mg.rank, pos: int32(i), id: mg.id})
		}
	}
	for len(h) > 0 {
		var top bpeCand
		top, h = heapPop(h)
		s := &syms[top.pos]
		if s.gone || s.next < 0 {
			continue
		}
		right := syms[s.next]
		if mg, ok := m.merges[pairKey(s.id, right.id)]; !ok || mg.id != top.id {
			continue
		}
		syms[s.next].gone = true
		s.id = top.id
		s.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if s.prev >= 0 {
			if mg, ok := m.merges[pairKey(syms[s.prev].id, s.id)]; ok {
				h = heapPush(h, bpeCand{rank: mg.rank, pos: s.prev, id: mg.id})
			}
		}
		if s.next >= 0 {
			if mg, ok := m.merges[pairKey(s.id, syms[s.next].id)]; ok {
				h = heapPush(h, bpeCand{rank: mg.rank, pos: top.pos, id: mg.id})
			}
		}
	}
	w.heap = h
}

func candLess(a, b bpeCand) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

// heapPush and heapPop keep h a binary min-heap under candLess.
func heapPush(h []bpeCand, c bpeCand) []bpeCand {
	h = append(h, c)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !candLess(h[i], h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	return h
}

func heapPop(h []bpeCand) (bpeCand, []bpeCand) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, small := 2*i+1, 2*i+2, i
		if l < len(h) && candLess(h[l], h[small]) {
			small = l
		}
		if r < len(h) && candLess(h[r], h[small]) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	return top, h
}
