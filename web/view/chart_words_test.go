package view

import (
	"reflect"
	"testing"

	"tracer/lessons"
	"tracer/web/words"
)

// TestChartWordsFillEveryField: the page gives the charts every word they
// draw, in each language (a field left empty would read in English).
func TestChartWordsFillEveryField(t *testing.T) {
	book, err := words.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range lessons.Languages() {
		t.Run(lang, func(t *testing.T) {
			w := reflect.ValueOf(chartWords(book.In(lang)))
			for i := range w.NumField() {
				if w.Field(i).String() == "" {
					t.Errorf("chartWords(%s).%s is empty, want the page's word", lang, w.Type().Field(i).Name)
				}
			}
		})
	}
	if w := reflect.ValueOf(chartWords(words.Words{})); !w.IsZero() {
		t.Errorf("chartWords without a catalog = %v, want zero (English)", w)
	}
}
