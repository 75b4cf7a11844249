// Package engine runs generate(): the loop that asks a Model for next-token
// logits, passes them through transformers' logits processors, picks a token
// (greedy, sampled, forced or by beam search), appends it and stops on EOS or
// a length limit, recording every decision as a trace.Step.
//
// The toy bigram table (package toy) and the real transformer architectures
// (package engine/arch) implement the same Model interface, so the loop has
// one code path for both.
package engine
