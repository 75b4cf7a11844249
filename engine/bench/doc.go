// Package bench measures how fast a model decodes against what the
// machine allows: prefill and decode speed through the real generation
// loop, the bytes a decode step reads (weights at their dtype, the whole
// output head, the KV cache), the main-memory read bandwidth (measured
// the way tools/membw.c does, right before and after the run and between
// its repetitions) and the FP32 FMA peak that bounds prefill (before and
// after). tracer bench prints its Report.
package bench
