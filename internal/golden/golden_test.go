package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Helper()                           {}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	old := []byte("a\nb\n")
	os.WriteFile(filepath.Join(dir, "REVIEWED"), []byte("# comment\n"+Sum(old)+"  x.txt  the first version\n"), 0o644)
	tests := []struct {
		name      string
		got, want []byte
		update    bool
		write     bool
		fails     string
	}{
		{"same", old, old, false, false, ""},
		{"differs", []byte("a\nc\n"), old, false, false, "the output differs"},
		{"updated, not reviewed", []byte("a\nc\n"), old, true, true, "without its line"},
		{"updated to the reviewed output", old, []byte("x\n"), true, true, ""},
	}
	for _, tt := range tests {
		r := Load(t, dir)
		rec := &recorder{TB: t}
		write := r.Check(rec, "x.txt", tt.got, tt.want, tt.update)
		failed := strings.Join(rec.errs, "; ")
		if write != tt.write || (tt.fails == "") != (failed == "") || tt.fails != "" && !strings.Contains(failed, tt.fails) {
			t.Errorf("%s: write %v, failures %q; want write %v, failure %q", tt.name, write, failed, tt.write, tt.fails)
		}
	}
	r := Load(t, dir)
	rec := &recorder{TB: t}
	r.Check(rec, "new.txt", []byte("n\n"), nil, true)
	r.Finish(rec)
	if len(rec.errs) != 2 {
		t.Errorf("a new golden and a stale line: %q, want two failures", rec.errs)
	}
	if d := Diff([]byte("a\nb\nc\n"), []byte("a\nx\nc\n")); !strings.Contains(d, "-b\n+x\n") {
		t.Errorf("Diff: %q", d)
	}
}
