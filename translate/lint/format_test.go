package lint

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// TestAppendOneLine checks appendOneLine, whose fast path copies a text
// that is already on one line, against its definition: the words between
// runs of ASCII white space, joined by one space.
func TestAppendOneLine(t *testing.T) {
	isSpace := func(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f", r) }
	check := func(s string) {
		t.Helper()
		want := strings.Join(strings.FieldsFunc(s, isSpace), " ")
		if got := string(appendOneLine([]byte("x"), s)); got != "x"+want {
			t.Errorf("appendOneLine(%q) = %q, want %q", s, got[1:], want)
		}
	}
	for _, s := range []string{"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\x01b", "a \x01 b", "é\u00a0b", "Order allow,deny"} {
		check(s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Random bytes, white space and not.
	alphabet := []string{"a", "b", "word", " ", " ", " ", "\t", "\n", "\r", "\v", "\f", "\x01", "\x00", "é", "\xff"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		check(b.String())
	}
	// Texts on one line, as most are, with one defect anywhere or none.
	words := []string{"a", "ab", "word", "Require", "é", "\xff"}
	defects := []string{" ", "\t", "\n", "\x01", "  "}
	for range 20000 {
		var b strings.Builder
		for i := range rng.IntN(30) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		s := b.String()
		if at := rng.IntN(len(s) + 2); at <= len(s) {
			s = s[:at] + defects[rng.IntN(len(defects))] + s[at:]
		}
		check(s)
	}
}

// TestIsOneLine checks the eight-bytes-at-a-time isOneLine against its
// definition: for every byte value at every position of texts of every
// length up to 24, over a background of the bytes nearest the bounds; and
// for a space at every pair of positions.
func TestIsOneLine(t *testing.T) {
	isSpace := func(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f", r) }
	want := func(b []byte) bool {
		if bytes.ContainsFunc(b, func(r rune) bool { return r < ' ' }) {
			return false
		}
		return string(b) == strings.Join(strings.FieldsFunc(string(b), isSpace), " ")
	}
	check := func(b []byte) {
		t.Helper()
		if got := isOneLine(string(b)); got != want(b) {
			t.Fatalf("isOneLine(%q) = %v", b, got)
		}
	}
	for _, bg := range []byte{'a', ' ', 0x7f, 0x80, 0xff} {
		for n := 1; n <= 24; n++ {
			for at := range n {
				for c := range 256 {
					b := bytes.Repeat([]byte{bg}, n)
					b[at] = byte(c)
					check(b)
				}
			}
		}
	}
	for n := 1; n <= 24; n++ {
		for i := range n {
			for j := i + 1; j < n; j++ {
				b := bytes.Repeat([]byte{'a'}, n)
				b[i], b[j] = ' ', ' '
				check(b)
			}
		}
	}
}

// TestWriteChunked writes records of every size, from none to many
// chunks' worth, and checks they come out whole and in order, a write per
// chunk; that each goroutine formats with its own function; and that a
// failed write is reported, the writes after it not made, and nothing left
// waiting.
func TestWriteChunked(t *testing.T) {
	rec := func(b []byte, i int) []byte {
		return append(append(b, strings.Repeat("x", i%300)...), fmt.Sprintf(" %d\n", i)...)
	}
	newRec := func() func([]byte, int) []byte {
		busy := false // a function used by two goroutines at once would see it set
		return func(b []byte, i int) []byte {
			if busy {
				panic("a record function used by two goroutines at once")
			}
			busy = true
			defer func() { busy = false }()
			return rec(b, i)
		}
	}
	for _, n := range []int{0, 1, 10, chunkRecords, chunkRecords + 1, 3000, 20000} {
		var want []byte
		for i := range n {
			want = rec(want, i)
		}
		var w countWriter
		if err := writeChunked(&w, n, newRec); err != nil {
			t.Fatalf("%d records: %v", n, err)
		}
		if !bytes.Equal(w.buf.Bytes(), want) {
			t.Errorf("%d records: wrote %d bytes, want %d, or not the same", n, w.buf.Len(), len(want))
		}
		if chunks := (n + chunkRecords - 1) / chunkRecords; w.writes != chunks {
			t.Errorf("%d records: %d writes, want %d", n, w.writes, chunks)
		}
	}
	before := runtime.NumGoroutine()
	for _, failAt := range []int{1, 2, 5} {
		w := countWriter{failAt: failAt}
		err := writeChunked(&w, 20000, newRec)
		if err == nil || w.writes != failAt {
			t.Errorf("a writer failing at write %d: error %v after %d writes", failAt, err, w.writes)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left running", runtime.NumGoroutine()-before)
		}
	}
}

// countWriter counts its writes; with failAt set, that write fails, and
// any after it is counted as made.
type countWriter struct {
	buf            bytes.Buffer
	writes, failAt int
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.failAt > 0 && w.writes >= w.failAt {
		return 0, errors.New("disk full")
	}
	return w.buf.Write(p)
}

// TestWriteTextShared writes findings that share long texts, on one line
// and not, as most of a big report's do, and holds each line to the
// texts made one line on their own.
func TestWriteTextShared(t *testing.T) {
	long := func(s string) string { return strings.Repeat(s, 10) }
	texts := []string{long("one line of text "), long("two\tlines\nof  text "), long("x") + " ", "short  one", ""}
	var r Report
	var want strings.Builder
	for i := range 2000 {
		f := Finding{ID: "DIR-10", Severity: "warning", Pos: apacheconf.Pos{File: "f", Line: i + 1, Col: 1},
			Directive: texts[i%len(texts)], Change: texts[(i/2)%len(texts)], Fix: texts[(i/3)%len(texts)]}
		if i%7 == 0 {
			f.Fix = long(fmt.Sprint(" own  text ", i)) // not shared
		}
		r.Findings = append(r.Findings, f)
		fmt.Fprintf(&want, "f:%d:1: DIR-10 warning: %s: %s; %s\n", i+1, oneLine(f.Directive), oneLine(f.Change), oneLine(f.Fix))
	}
	var got strings.Builder
	if err := WriteText(&got, &r); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("WriteText differs from each text made one line on its own")
	}
}
