package main

// buildTags are the build tags of this test binary (buildtag_*_test.go),
// which TestMain builds the tracer binary with too: a test of the pure-Go
// kernels (-tags purego) must run a binary with the same kernels.
var buildTags []string
