package lessons_test

import (
	"context"
	"fmt"
	"slices"

	"tracer/engine"
	"tracer/engine/models"
	"tracer/lessons"
	tracertoy "tracer/toy"
)

// A page resolves a deep link /lessons/{lesson}/{step}, shows the step's
// text in the reader's language, and turns its run into a trace.
func ExampleLoad() {
	c, err := lessons.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	l := c.Lesson("greedy-on-the-toy")
	s := l.Step("pick-chai")
	number := fmt.Sprint(slices.IndexFunc(c.Lessons, func(x lessons.Lesson) bool { return x.ID == l.ID }) + 1)
	fmt.Println(lessons.Fill(c.UI.Get(lessons.KeyLessonN, lessons.Hindi), "n", number), "·", l.Title.In(lessons.Hindi))
	fmt.Println(lessons.Fill(c.UI.Get(lessons.KeyStepNOfTotal, lessons.English), "n", fmt.Sprint(l.Index(s.ID)+1), "total", fmt.Sprint(len(l.Steps))))
	fmt.Println(s.At, s.Highlight)

	toy, err := models.Open("toy")
	if err != nil {
		fmt.Println(err)
		return
	}
	req, err := s.Runs[0].Request(toy)
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := engine.Generate(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := lessons.Walk(t, tracertoy.Of(toy).Table())
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := s.Moment()
	m := w.Moments[n]
	fmt.Printf("line %d (%s), row %s, cell %s\n", m.Line, m.Role, m.Row, m.Cell)
	// Output:
	// पाठ 2 · खिलौना मॉडल पर greedy decoding को क़दम-दर-क़दम देखना
	// Step 7 of 12
	// moment:5 [code-line:pick table-row table-cell annotation]
	// line 12 (pick), row love, cell chai
}

func ExampleRun_Command() {
	c, err := lessons.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	s := c.Lesson("kv-cache").Step("cache-on-and-off")
	for _, r := range s.Runs {
		fmt.Printf("%-28s %s\n", r.Label.In(lessons.English)+":", r.Command("HuggingFaceTB/SmolLM2-135M-Instruct"))
	}
	// Output:
	// cache on:                    tracer run --model HuggingFaceTB/SmolLM2-135M-Instruct --prompt 'Once upon a time there was a little' --max-new-tokens 24 --do-sample=false
	// cache off (use_cache=False): tracer run --model HuggingFaceTB/SmolLM2-135M-Instruct --prompt 'Once upon a time there was a little' --max-new-tokens 24 --do-sample=false --no-cache
}

func ExampleText_In() {
	t := lessons.Text{"en": "Quick check", "hi": "त्वरित जाँच"}
	for _, lang := range lessons.Languages() {
		fmt.Println(lang, t.In(lang))
	}
	fmt.Println("fr", t.In("fr"))
	// Output:
	// en Quick check
	// hi त्वरित जाँच
	// fr Quick check
}
