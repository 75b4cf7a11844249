//go:build race

package web

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
