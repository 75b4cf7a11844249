package runs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"tracer/engine/tokenizer"
	"tracer/trace"
	"tracer/web/marks"
	"tracer/web/words"
)

// UntilForm is the page's breakpoints form: each field set ("" is off) is
// one breakpoint, and playing stops at the first step where any hits.
type UntilForm struct {
	Top1Below    string `json:"top1_below"`    // the model's top-1 probability falls below x
	RankAbove    string `json:"rank_above"`    // the chosen token's rank exceeds k
	EntropyAbove string `json:"entropy_above"` // the entropy exceeds h nats
	Token        string `json:"token"`         // this token (a token, or #id) enters ...
	TokenTopK    string `json:"token_top_k"`   // ... the top k (default 5)
}

// Breakpoints are the parsed conditions of a run-until.
type Breakpoints struct {
	top1    *float64
	rank    *int
	entropy *float64
	tokenID int    // -1: match tokenText instead
	token   string // the token as typed; "" for none
	topK    int
	W       words.Words // the page's language, for what the breakpoints say
}

// Parse checks the form. tok, when not nil, resolves a typed token to its
// id; without it the token is matched by its text in the trace.
func (f UntilForm) Parse(tok tokenizer.Tokenizer, vocab int) (*Breakpoints, error) {
	b := &Breakpoints{tokenID: -1, topK: 5}
	var err error
	if b.top1, err = optFloat("top-1 probability", f.Top1Below); err != nil {
		return nil, err
	}
	if b.entropy, err = optFloat("entropy", f.EntropyAbove); err != nil {
		return nil, err
	}
	if b.rank, err = optInt("rank", f.RankAbove); err != nil {
		return nil, err
	}
	if k, err := optInt("top-k", f.TokenTopK); err != nil {
		return nil, err
	} else if k != nil {
		if *k < 1 {
			return nil, fmt.Errorf("top-k must be at least 1, got %d", *k)
		}
		b.topK = *k
	}
	if b.token = strings.TrimSpace(f.Token); b.token != "" {
		if id, err := lookupToken(tok, b.token, vocab); err == nil {
			b.tokenID = id
		} else if tok != nil || strings.HasPrefix(b.token, "#") {
			return nil, err
		}
	}
	if b.top1 == nil && b.rank == nil && b.entropy == nil && b.token == "" {
		return nil, errors.New("no breakpoint set: give a top-1 probability, a rank, an entropy or a token")
	}
	return b, nil
}

// Describe lists the breakpoints: "top-1 < 0.5 or rank > 1".
func (b *Breakpoints) Describe() string {
	var parts []string
	if b.top1 != nil {
		parts = append(parts, b.W.F(words.KeyDbgBpTop1, "p", strconv.FormatFloat(*b.top1, 'g', -1, 64)))
	}
	if b.rank != nil {
		parts = append(parts, b.W.F(words.KeyDbgBpRank, "n", strconv.Itoa(*b.rank)))
	}
	if b.entropy != nil {
		parts = append(parts, b.W.F(words.KeyDbgBpEntropy, "e", strconv.FormatFloat(*b.entropy, 'g', -1, 64)))
	}
	if b.token != "" {
		parts = append(parts, b.W.F(words.KeyDbgBpEnters, "token", strconv.Quote(b.token), "k", strconv.Itoa(b.topK)))
	}
	return strings.Join(parts, b.W.T(words.KeyDbgBpOr))
}

// Check reports which breakpoints hit at step i of steps for a row, or "".
func (b *Breakpoints) Check(steps []trace.Step, i, row int) string {
	if i < 0 || i >= len(steps) {
		return ""
	}
	sr := steps[i].Rows[min(row, len(steps[i].Rows)-1)]
	var hits []string
	if b.top1 != nil && len(sr.Candidates) > 0 && sr.Candidates[0].Prob < *b.top1 {
		hits = append(hits, b.W.F(words.KeyDbgHitTop1, "p", probText(sr.Candidates[0].Prob), "limit", strconv.FormatFloat(*b.top1, 'g', -1, 64)))
	}
	if b.rank != nil && sr.Chosen.Rank > *b.rank {
		hits = append(hits, b.W.F(words.KeyDbgHitRank, "token", strconv.Quote(marks.TokenOrID(sr.Chosen.Token, sr.Chosen.ID)),
			"rank", strconv.Itoa(sr.Chosen.Rank), "limit", strconv.Itoa(*b.rank)))
	}
	if b.entropy != nil && sr.Entropy > *b.entropy {
		hits = append(hits, b.W.F(words.KeyDbgHitEntropy, "e", strconv.FormatFloat(sr.Entropy, 'f', 3, 64), "limit", strconv.FormatFloat(*b.entropy, 'g', -1, 64)))
	}
	if b.token != "" {
		rank := b.rankIn(sr)
		was := 0
		if i > 0 {
			prev := steps[i-1].Rows[min(row, len(steps[i-1].Rows)-1)]
			was = b.rankIn(prev)
		}
		if rank > 0 && was == 0 {
			hits = append(hits, b.W.F(words.KeyDbgHitEntered, "token", strconv.Quote(b.token), "k", strconv.Itoa(b.topK), "rank", strconv.Itoa(rank)))
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return b.W.F(words.KeyDbgHit, "n", strconv.Itoa(steps[i].Index+1), "hits", strings.Join(hits, "; "))
}

// rankIn is the 1-based rank of the breakpoint's token among a row's top-k
// raw candidates, or 0 when it is not there.
func (b *Breakpoints) rankIn(sr trace.StepRow) int {
	for k, c := range sr.Candidates {
		if k == b.topK {
			break
		}
		if b.tokenID >= 0 && c.ID == b.tokenID || b.tokenID < 0 && c.Token == b.token {
			return k + 1
		}
	}
	return 0
}
