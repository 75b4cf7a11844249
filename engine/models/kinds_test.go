package models_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracer/engine/hub"
	"tracer/engine/models"
)

// TestRegisteredKinds: a kind registered from outside engine (as the toy
// does) opens by name and by file through Open and Locate, and a name no
// kind claims gives the usual clear error.
func TestRegisteredKinds(t *testing.T) {
	var opened []string
	models.Register(models.Kind{
		Name:  "test-table",
		Names: []string{"test-table"},
		File:  func(path string) bool { return strings.HasSuffix(path, ".testtable") },
		Open: func(spec string) (*models.Loaded, error) {
			opened = append(opened, spec)
			return &models.Loaded{Spec: spec, StartFromBOS: true}, nil
		},
	})
	file := filepath.Join(t.TempDir(), "t.testtable")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"test-table", file} {
		t.Run(filepath.Base(spec), func(t *testing.T) {
			got, err := models.Locate(t.Context(), spec, hub.Options{CacheDir: t.TempDir(), Offline: true})
			if err != nil || got != spec {
				t.Fatalf("Locate(%q) = %q, %v; want %q", spec, got, err, spec)
			}
			l, err := models.Open(spec)
			if err != nil {
				t.Fatal(err)
			}
			if l.Spec != spec || opened[len(opened)-1] != spec {
				t.Errorf("got spec %q (kind opened %v), want %q", l.Spec, opened, spec)
			}
		})
	}
	t.Run("a folder is never a kind's file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d.testtable")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		n := len(opened)
		models.Open(dir) // a folder without a model: an error from the HF path
		if len(opened) != n {
			t.Errorf("the kind opened the folder %s", dir)
		}
	})
	t.Run("toy is not linked here", func(t *testing.T) {
		_, err := models.Open("toy")
		if err == nil || !strings.Contains(err.Error(), `model "toy": no such file or folder`) {
			t.Errorf("got %v, want the no-such-model error (package toy is not linked into engine's tests)", err)
		}
	})
	t.Run("twice is a programming error", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("registering a kind twice did not panic")
			}
		}()
		models.Register(models.Kind{Name: "test-table", Open: func(string) (*models.Loaded, error) { return nil, nil }})
	})
}
