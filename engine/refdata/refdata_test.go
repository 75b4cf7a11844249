package refdata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a TB that remembers how the test ended.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = f }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = f }

func TestPathPrefersTestdata(t *testing.T) {
	top, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(top, "go.mod")); err != nil {
		t.Fatalf("Root %s holds no go.mod", top)
	}
	if _, err := Path("no/such/reference-file"); err == nil || !strings.Contains(err.Error(), "no/such/reference-file") {
		t.Errorf("Path of a missing file: got %v, want an error naming it", err)
	}
}

func TestNeedSkipsOrFails(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var r recorder
		Need(&r, "no/such/reference-file")
		if ci == "" && (r.skipped == "" || r.failed != "") {
			t.Errorf("outside CI: skipped %q failed %q, want a skip", r.skipped, r.failed)
		}
		if ci != "" && r.failed == "" {
			t.Errorf("in CI: want a failure, got skip %q", r.skipped)
		}
	}
}

func TestLookupLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "refdata.log")
	t.Setenv("TRACER_REFDATA_LOG", log)
	t.Run("sub", func(t *testing.T) {
		if _, err := Path("no/such/reference-file"); err == nil {
			t.Fatal("Path of a missing file: no error")
		}
	})
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "refdata.TestLookupLog\tno/such/reference-file\tabsent\n"; string(got) != want {
		t.Errorf("log: got %q, want %q", got, want)
	}
}
