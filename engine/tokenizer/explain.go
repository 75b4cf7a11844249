package tokenizer

import "unicode/utf8"

// Explain says how encoding builds one token, for a learner: the
// characters (or bytes) it starts from and the merges that join them, in
// the order the encoder applies them. It replays the model's own merge
// rules on the token's own characters:
//
//   - BPE (tokenizer.json, vocab.json + merges.txt, GGUF "gpt2"): the
//     merge of lowest rank first, the leftmost of equal ranks;
//   - merges by score (llama2.c's tokenizer.bin, GGUF "llama"): the join
//     with the highest score first, the leftmost of equal scores.
//
// Both encoders merge a token's span of a word on its own: a merge across
// the span's edge would have left a token that straddles it, so the merges
// that built a token in any text are the ones its characters give alone.
//
// Tokens no merge builds say why instead: a single character that is a
// token itself, a byte written <0xNN> for a character the vocabulary
// lacks (byte fallback), an added or special token cut out of the text
// whole, the unknown token, or a whole word in the vocabulary that no
// merge reaches (a BPE with ignore_merges keeps such words; one that
// merges also reach is shown merged, though such a BPE takes a whole
// piece found in the vocabulary without merging it). A tokenizer
// Explain cannot look into (the toy's, Hugging Face's Rust library), an
// id outside the vocabulary, and a BPE with a subword prefix or suffix
// give BuildUnknown.
func Explain(t Tokenizer, id int) Building {
	switch t := t.(type) {
	case *HF:
		return t.explain(id)
	case *Llama2C:
		return t.explain(id)
	case *ggufTokenizer:
		return t.explain(id)
	}
	return Building{}
}

// Building is how encoding builds one token (see Explain).
type Building struct {
	Kind BuildKind
	// Units are the ids the token is merged from, in order: one per
	// character, or per byte (byte-level BPE's characters stand for
	// bytes; byte fallback writes a character as its bytes). Set for
	// BuildMerged and BuildSingle.
	Units []int
	// Merges are the merges that join Units into the token, in the order
	// they apply; the last one gives the token. Set for BuildMerged.
	Merges []Merge
}

// Merge is one merge: the adjacent tokens Left and Right joined into
// Result.
type Merge struct {
	Left, Right, Result int
	// Rank is the merge's place in a BPE's list of merges, 0 first (the
	// lower, the sooner it applies); -1 for a merge by score.
	Rank int
	// Score is Result's score in a vocabulary merged by score (the higher,
	// the sooner it applies); 0 for BPE.
	Score float32
}

// BuildKind says how a token comes out of encoding.
type BuildKind int

const (
	BuildUnknown      BuildKind = iota // Explain cannot tell (see Explain)
	BuildMerged                        // Units joined by Merges
	BuildSingle                        // one character (or byte) that is a token itself: nothing to merge
	BuildByteFallback                  // a byte, <0xNN>, of a character the vocabulary lacks
	BuildAdded                         // an added or special token: cut out of the text whole, or put around it (BOS)
	BuildWhole                         // in the vocabulary as a whole, not built by merges
	BuildUnk                           // the unknown token, for what the vocabulary cannot spell
)

// String names the kind: "merged", "byte fallback".
func (k BuildKind) String() string {
	switch k {
	case BuildMerged:
		return "merged"
	case BuildSingle:
		return "single"
	case BuildByteFallback:
		return "byte fallback"
	case BuildAdded:
		return "added"
	case BuildWhole:
		return "whole"
	case BuildUnk:
		return "unk"
	}
	return "unknown"
}

// explain is Explain for a Hugging Face pipeline: added tokens, then the
// BPE model.
func (t *HF) explain(id int) Building {
	if _, ok := t.added.byID[id]; ok {
		return Building{Kind: BuildAdded}
	}
	m := t.model
	if id < 0 || id >= len(m.tokens) || !m.known[id] {
		return Building{}
	}
	if id == m.unk {
		return Building{Kind: BuildUnk}
	}
	tok := m.tokens[id]
	if b, ok := fallbackByte(tok); ok && m.byteFallback && m.fallbackIDs[b] == int32(id) {
		return Building{Kind: BuildByteFallback}
	}
	if m.prefix != "" || m.suffix != "" {
		return Building{} // the units would carry the prefix and suffix: not replayed
	}
	// The units initWord finds: each character's token, or its byte
	// fallback. Byte-level vocabularies spell every byte as one character,
	// so the token's characters are its bytes' units either way.
	var units []int
	for rest := tok; rest != ""; {
		_, n := utf8.DecodeRuneInString(rest)
		unit := rest[:n]
		rest = rest[n:]
		if uid, ok := m.vocab[unit]; ok {
			units = append(units, uid)
			continue
		}
		if !m.byteFallback || !m.allFallback(unit) {
			return whole(id, tok != "")
		}
		for j := 0; j < len(unit); j++ {
			units = append(units, int(m.fallbackIDs[unit[j]]))
		}
	}
	return replay(id, units, func(a, b int) (Merge, bool) {
		mg, ok := m.merges[pairKey(int32(a), int32(b))]
		return Merge{Left: a, Right: b, Result: int(mg.id), Rank: int(mg.rank)}, ok
	}, func(x, y Merge) bool { return x.Rank < y.Rank })
}

// explain is Explain for llama2.c's tokenizer: <unk>, BOS and EOS, the
// 256 byte tokens, then merges by score as Encode runs them.
func (t *Llama2C) explain(id int) Building {
	switch {
	case id < 0 || id >= len(t.pieces):
		return Building{}
	case id == 0:
		return Building{Kind: BuildUnk}
	case id <= 2:
		return Building{Kind: BuildAdded}
	}
	piece := t.pieces[id]
	if _, ok := byteToken(piece); ok && id < 259 {
		return Building{Kind: BuildByteFallback}
	}
	units, ok := scoreUnits(piece, func(c string) (int, bool) {
		uid, ok := t.ids[c]
		return uid, ok
	}, func(b byte) (int, bool) { return int(b) + 3, int(b)+3 < len(t.pieces) })
	if !ok {
		return whole(id, piece != "")
	}
	return replay(id, units, t.scoreMerge, scoreBefore)
}

// explain is Explain for a GGUF file's tokenizer: control and
// user-defined tokens are cut out whole; "gpt2" is a BPE pipeline;
// "llama" merges by score, its spaces written ▁.
func (g *ggufTokenizer) explain(id int) Building {
	if id < 0 || id >= len(g.tokens) {
		return Building{}
	}
	switch g.types[id] {
	case ggufControl, ggufUserDefined:
		return Building{Kind: BuildAdded}
	}
	if g.bpe != nil {
		return g.bpe.explain(id)
	}
	switch {
	case g.types[id] == ggufUnknown || id == g.specials.UNK:
		return Building{Kind: BuildUnk}
	case g.types[id] == ggufByte:
		return Building{Kind: BuildByteFallback}
	case g.types[id] == ggufUnused:
		return Building{Kind: BuildWhole}
	}
	// encodeText's units: each character's token; else a space no token
	// holds is the bytes of ▁, any other character its own bytes.
	piece := g.spm.pieces[id]
	var units []int
	for rest := piece; rest != ""; {
		_, n := utf8.DecodeRuneInString(rest)
		c := rest[:n]
		rest = rest[n:]
		if uid, ok := g.spm.ids[c]; ok {
			units = append(units, uid)
			continue
		}
		if c == " " {
			c = "▁"
		}
		for _, b := range []byte(c) {
			if g.byteIDs[b] < 0 {
				return whole(id, true)
			}
			units = append(units, g.byteIDs[b])
		}
	}
	return replay(id, units, g.spm.scoreMerge, scoreBefore)
}

// scoreUnits splits piece as llama2.c's Encode does: each UTF-8 character
// (at most four bytes) is its token, or its bytes' tokens.
func scoreUnits(piece string, lookup func(string) (int, bool), byteID func(byte) (int, bool)) ([]int, bool) {
	var units []int
	var buf []byte
	for i := 0; i < len(piece); i++ {
		c := piece[i]
		if c&0xC0 != 0x80 {
			buf = buf[:0]
		}
		buf = append(buf, c)
		if i+1 < len(piece) && piece[i+1]&0xC0 == 0x80 && len(buf) < 4 {
			continue
		}
		if uid, ok := lookup(string(buf)); ok {
			units = append(units, uid)
		} else {
			for _, b := range buf {
				uid, ok := byteID(b)
				if !ok {
					return units, false
				}
				units = append(units, uid)
			}
		}
		buf = buf[:0]
	}
	return units, true
}

// scoreMerge is the merge of the tokens a and b in a vocabulary merged by
// score: their joined string is a token with a score above run.c's floor.
func (t *Llama2C) scoreMerge(a, b int) (Merge, bool) {
	id, ok := t.ids[t.pieces[a]+t.pieces[b]]
	if !ok || !(t.scores[id] > float32(-1e10)) {
		return Merge{}, false
	}
	return Merge{Left: a, Right: b, Result: id, Rank: -1, Score: t.scores[id]}, true
}

func scoreBefore(x, y Merge) bool { return x.Score > y.Score }

// replay merges units until no pair merges, each time the pair that
// before puts first (the leftmost of equals), and reports whether that
// builds id.
func replay(id int, units []int, merge func(a, b int) (Merge, bool), before func(x, y Merge) bool) Building {
	if len(units) == 0 {
		return Building{}
	}
	if len(units) == 1 && units[0] == id {
		return Building{Kind: BuildSingle, Units: units}
	}
	syms := append([]int(nil), units...)
	var merges []Merge
	for len(syms) > 1 {
		at := -1
		var best Merge
		for i := 0; i+1 < len(syms); i++ {
			if mg, ok := merge(syms[i], syms[i+1]); ok && (at < 0 || before(mg, best)) {
				at, best = i, mg
			}
		}
		if at < 0 {
			break
		}
		merges = append(merges, best)
		syms[at] = best.Result
		syms = append(syms[:at+1], syms[at+2:]...)
	}
	if len(syms) != 1 || syms[0] != id {
		return whole(id, true)
	}
	return Building{Kind: BuildMerged, Units: units, Merges: merges}
}

// whole is a token in the vocabulary that no merge of its characters
// builds; an empty token string is not explained.
func whole(id int, nonEmpty bool) Building {
	if !nonEmpty || id < 0 {
		return Building{}
	}
	return Building{Kind: BuildWhole}
}
