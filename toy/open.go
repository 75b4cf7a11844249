package toy

import (
	"path/filepath"
	"strings"

	"tracer/engine/models"
)

// The toy registers itself with engine/models, so every command and page
// that links this package opens "toy" (the lesson's table) and toy table
// files (*.json) through models.Open, while engine never imports the toy.
func init() {
	models.Register(models.Kind{
		Name:  "toy",
		Names: []string{"toy"},
		File:  func(path string) bool { return strings.EqualFold(filepath.Ext(path), ".json") },
		Open:  open,
	})
}

// open opens "toy" or a table file as a loaded model.
func open(spec string) (*models.Loaded, error) {
	t := Lesson()
	if spec != "toy" {
		var err error
		if t, err = Load(spec); err != nil {
			return nil, err
		}
	}
	m := New(t)
	return &models.Loaded{Spec: spec, Model: m, Tokenizer: m, Config: m.GenerationConfig(), StartFromBOS: true}, nil
}

// Of returns the toy a loaded model is, or nil when it is another kind.
func Of(l *models.Loaded) *Model {
	if l == nil {
		return nil
	}
	m, _ := l.Model.(*Model)
	return m
}
