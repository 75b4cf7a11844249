package lessons

import (
	"encoding/json"
	"strings"
	"testing"

	"tracer/engine"
)

// TestLessonSettingsAreTheRegistry walks the option registry: a lesson's
// run may set exactly the options marked Lesson, by their GenerationConfig
// names; each sets its option only, writes its tracer run flag in the
// run's command, and may be highlighted as option:NAME.
func TestLessonSettingsAreTheRegistry(t *testing.T) {
	for _, op := range engine.Options() {
		t.Run(op.Name, func(t *testing.T) {
			value := "3"
			switch op.Kind {
			case engine.KindBool:
				value = "true"
			case engine.KindString:
				v, _ := json.Marshal(op.DefaultText())
				value = string(v)
			case engine.KindInts:
				value = "[3]"
			case engine.KindStrings:
				value = `["."]`
			}
			run := Run{ID: "r", Model: ModelToy, Options: Options{{Name: op.Name, Value: value}}}
			s, err := run.Settings()
			if !op.Lesson {
				if err == nil {
					t.Errorf("a lesson set %s, which the registry keeps from lessons", op.Name)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s=%s: %v", op.Name, value, err)
			}
			for _, other := range engine.Options() {
				if set := other.IsSet(s); set != (other.Name == op.Name) {
					t.Errorf("%s=%s: %s set %v, want only %s set", op.Name, value, other.Name, set, op.Name)
				}
			}
			if cmd := run.Command("toy"); !strings.Contains(cmd, " --"+op.Flag) {
				t.Errorf("command %q lacks --%s", cmd, op.Flag)
			}
			if _, err := lookupHighlight("option:" + op.Name); err != nil {
				t.Errorf("highlight option:%s: %v", op.Name, err)
			}
		})
	}
	for _, alias := range []string{"T", "max_tokens"} {
		run := Run{ID: "r", Options: Options{{Name: alias, Value: "1"}}}
		if _, err := run.Settings(); err == nil {
			t.Errorf("a lesson set %q, want only GenerationConfig names", alias)
		}
	}
}
