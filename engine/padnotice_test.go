package engine

import (
	"context"
	"strings"
	"testing"
)

// TestPadNotice: the notice that pad_token_id falls back to eos_token_id
// shows where padding happens (a batch of prompts, beam search returning
// several sequences) and not for beams that are never padded.
func TestPadNotice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prompts [][]int
		user    Settings
		want    bool
	}{
		{"one prompt", [][]int{{0, 1}}, Settings{MaxNewTokens: ptr(2)}, false},
		{"batch", [][]int{{0, 1}, {2}}, Settings{MaxNewTokens: ptr(2)}, true},
		{"beams", [][]int{{0, 1}}, Settings{MaxNewTokens: ptr(2), NumBeams: ptr(3)}, false},
		{"beams returning two", [][]int{{0, 1}}, Settings{MaxNewTokens: ptr(2), NumBeams: ptr(3), NumReturnSequences: ptr(2)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &eosModel{fixedModel{logits: []float32{0.5, -1, 2.25, 2, -3, 0, 1}}}
			o, notices, err := Resolve(m.Info(), nil, &tc.user)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Generate(context.Background(), Request{Model: m, Prompts: tc.prompts, Options: o, Notices: notices, Record: true})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(strings.Join(tr.Notices, "\n"), "pad_token_id is not set")
			if got != tc.want {
				t.Errorf("got the pad_token_id notice %v (notices %q), want %v", got, tr.Notices, tc.want)
			}
		})
	}
}

// eosModel is a fixedModel with an EOS token (id 4, never likely) and no
// pad token, so pad_token_id falls back to it.
type eosModel struct{ fixedModel }

func (m *eosModel) Info() Info {
	i := m.fixedModel.Info()
	i.EOS = []int{4}
	return i
}
