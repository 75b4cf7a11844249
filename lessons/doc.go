// Package lessons holds tracer's lessons and narrates runs of the toy bigram
// model.
//
// # Lessons as data
//
// The lessons are JSON files embedded in the package (data/lessons/*.json,
// one lesson per file, in file-name order) beside the page's own wording
// (data/ui.json). Load parses and validates them once and returns a
// Catalog: lessons made of steps, each step with its text in every language
// of Languages, the runs it drives (on the toy or on whatever real model is
// available), the position in those runs it shows (At), the page elements it
// highlights (a closed set, see HighlightNames), code to compare with, and
// optional quiz questions. A page turns a step's run into a generation with
// Run.Request and engine.Generate, and shows the step's highlights on the
// trace it gets.
//
// # The toy's walkthrough
//
// Given a toy trace and the table that produced it, Walk writes tracer's
// Python listing of the generation loop and the walkthrough's moments: which
// line runs, which row and cell of the table are read, what the token list
// holds, and a short explanation computed from the trace's numbers. For the
// lesson's table run greedily, Walk gives the ten moments of the lesson:
// the start marker, the loop condition, the four picks (with the first
// append after the first pick), appending the end marker, the loop stopping
// and the markers being stripped. Steps of the greedy lesson point at those
// moments by index (At "moment:N").
package lessons
