package lessons

import (
	"strings"
	"testing"
)

// The quiz page opens each option's feedback with its own verdict
// ("Correct!", "Not quite"), so the feedback must not start with one
// again: "Correct! Correct." and "… नहीं नहीं।" read as stutters.
func TestQuizFeedbackLeavesTheVerdictToThePage(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string][]string{
		English: {"Correct", "Right", "Yes", "No", "Wrong"},
		Hindi:   {"सही", "नहीं", "ग़लत"},
	}
	n := 0
	for _, l := range c.Lessons {
		for _, st := range l.Steps {
			for _, q := range st.Questions {
				for _, o := range q.Options {
					for lang, words := range verdicts {
						fb := o.Feedback.In(lang)
						n++
						first, _, _ := strings.Cut(fb, " ")
						first = strings.TrimRight(first, ".:!,।")
						for _, w := range words {
							if first == w {
								t.Errorf("%s/%s/%s/%s (%s): feedback starts with the verdict %q: %q", l.ID, st.ID, q.ID, o.ID, lang, w, fb)
							}
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no quiz feedback found")
	}
}
