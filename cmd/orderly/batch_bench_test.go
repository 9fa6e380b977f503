package main

import (
	"io"
	"os"
	"testing"
)

// BenchmarkBatchLint runs "orderly lint" on the configuration BENCH_CONF
// names (scripts/bench-translate.sh makes a big one), as the command does:
// with batchGC (once: the first run's heap is the one prepared), writing
// the text report.
func BenchmarkBatchLint(b *testing.B) {
	conf := os.Getenv("BENCH_CONF")
	if conf == "" {
		b.Skip("BENCH_CONF not set")
	}
	batchGC()
	for b.Loop() {
		run([]string{"lint", conf}, io.Discard, io.Discard)
	}
}

// BenchmarkBatchTranslate runs "orderly translate -o DIR" on BENCH_CONF
// likewise, into a fresh directory each time.
func BenchmarkBatchTranslate(b *testing.B) {
	conf := os.Getenv("BENCH_CONF")
	if conf == "" {
		b.Skip("BENCH_CONF not set")
	}
	out := b.TempDir()
	batchGC()
	for b.Loop() {
		os.RemoveAll(out)
		run([]string{"translate", "-o", out, conf}, io.Discard, io.Discard)
	}
}
