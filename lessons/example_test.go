package lessons_test

import (
	"context"
	"fmt"

	"tracer/engine"
	"tracer/lessons"
	"tracer/toy"
)

func ExampleListing() {
	for _, l := range lessons.Listing(toy.Lesson(), lessons.ListingOptions{}) {
		fmt.Printf("%2d  %s\n", l.Number, l.Text)
	}
	// Output:
	//  1  # A bigram model: only the last word sets the odds of the next.
	//  2  probs = {
	//  3      "<s>": {"I": 0.9, "you": 0.1},
	//  4      "I": {"love": 0.7, "eat": 0.3},
	//  5      "love": {"chai": 0.6, "</s>": 0.4},
	//  6      "chai": {"</s>": 0.8, "too": 0.2},
	//  7  }
	//  8  BOS, EOS, CAP = "<s>", "</s>", 6
	//  9  tokens = [BOS]
	// 10  while tokens[-1] != EOS and len(tokens) < CAP:
	// 11      row = probs[tokens[-1]]
	// 12      word = max(row, key=row.get)  # greedy
	// 13      tokens.append(word)
	// 14  print(" ".join(w for w in tokens if w not in (BOS, EOS)))
}

func ExampleWalk() {
	m := toy.New(toy.Lesson())
	opts, _, err := engine.Resolve(m.Info(), m.GenerationConfig(), nil)
	if err != nil {
		panic(err)
	}
	t, err := engine.Generate(context.Background(), engine.Request{
		Model: m, Tokenizer: m, Prompts: [][]int{{0}}, Options: opts, Record: true,
	})
	if err != nil {
		panic(err)
	}
	w, err := lessons.Walk(t, m.Table())
	if err != nil {
		panic(err)
	}
	for i, mo := range w.Moments {
		fmt.Printf("%2d. line %2d  %-13s row %-6q cell %q\n", i+1, mo.Line, mo.Title, mo.Row, mo.Cell)
	}
	fmt.Println(w.Printed)
	// Output:
	//  1. line  9  start         row ""     cell ""
	//  2. line 10  check         row ""     cell ""
	//  3. line 12  pick I        row "<s>"  cell "I"
	//  4. line 13  append I      row "<s>"  cell "I"
	//  5. line 12  pick love     row "I"    cell "love"
	//  6. line 12  pick chai     row "love" cell "chai"
	//  7. line 12  pick </s>     row "chai" cell "</s>"
	//  8. line 13  append </s>   row "chai" cell "</s>"
	//  9. line 10  stop          row ""     cell ""
	// 10. line 14  strip markers row ""     cell ""
	// I love chai
}
