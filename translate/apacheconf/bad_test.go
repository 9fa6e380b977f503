package apacheconf

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBad loads every testdata/bad/*.conf and checks that the errors are
// exactly those its "# want: " comments list, in order.
func TestBad(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.conf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad corpus: %v", err)
	}
	for _, file := range files {
		name := strings.TrimPrefix(filepath.ToSlash(file), "testdata/")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			sc := bufio.NewScanner(bytes.NewReader(src))
			for sc.Scan() {
				if w, ok := strings.CutPrefix(sc.Text(), "# want: "); ok {
					want = append(want, w)
				}
			}
			if len(want) == 0 {
				t.Fatalf("%s has no '# want: ' line", file)
			}
			_, err = Load(name, fsOptions(os.DirFS("testdata")))
			if got := errString(err); got != strings.Join(want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
}
