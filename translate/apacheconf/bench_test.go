package apacheconf

import (
	"os"
	"runtime/debug"
	"testing"
)

// BenchmarkLoad loads the configuration BENCH_CONF names (scripts/
// bench-translate.sh makes a big one) as a 2.2 one, as translate reads
// its legacy configurations: the file is read once, before the timing,
// so that what is measured is the reading of its text. As in the batch
// commands (cmd/orderly's batchGC), the collector runs only at a memory
// limit, seldom: the cost measured is the reading's, not the collector's.
func BenchmarkLoad(b *testing.B) {
	conf := os.Getenv("BENCH_CONF")
	if conf == "" {
		b.Skip("BENCH_CONF not set")
	}
	src, err := os.ReadFile(conf)
	if err != nil {
		b.Fatal(err)
	}
	opt := Options{
		Version: "2.2.34",
		ReadFile: func(name string) ([]byte, error) {
			if name == conf {
				return src, nil
			}
			return os.ReadFile(name)
		},
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(512 << 20))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Load(conf, opt); err != nil {
			b.Fatal(err)
		}
	}
}
