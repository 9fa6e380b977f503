package lint

import (
	"bytes"
	"encoding/json"
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

// TestIsJSONPlain checks the eight-bytes-at-a-time isJSONPlain against
// encoding/json, for every byte value at every position of texts of every
// length up to 24, over a background of plain and other bytes: a text it
// calls plain is written as it is, and so is none of the other ASCII
// texts (those with other bytes go to encoding/json, right or not).
func TestIsJSONPlain(t *testing.T) {
	for _, bg := range []byte{'a', ' ', 0x7f, '"', 0x80} {
		for n := 1; n <= 24; n++ {
			for at := range n {
				for c := range 256 {
					b := bytes.Repeat([]byte{bg}, n)
					b[at] = byte(c)
					q, err := json.Marshal(string(b))
					if err != nil {
						t.Fatal(err)
					}
					asIs := string(q) == `"`+string(b)+`"`
					if got := isJSONPlain(string(b)); got && !asIs || !got && asIs && bg < 0x80 && c < 0x80 {
						t.Fatalf("isJSONPlain(%q) = %v", b, got)
					}
				}
			}
		}
	}
}

// TestAppendJSONString holds appendJSONString to encoding/json: for every
// text of one or two bytes, and for every byte value at every position
// of texts up to 24 bytes long over a plain background.
func TestAppendJSONString(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
	}
	check("")
	for c := range 1 << 16 {
		check(string([]byte{byte(c)}))
		check(string([]byte{byte(c >> 8), byte(c)}))
	}
	for n := 1; n <= 24; n++ {
		for at := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte{'a'}, n)
				b[at] = byte(c)
				check(string(b))
			}
		}
	}
}

// TestWriteJSONMatchesEncoder holds WriteJSON to what encoding/json's
// Encoder writes for the findings as JSONFinding values, indented by two
// spaces: for no finding, one, and more than a chunk's worth, with texts
// that need escaping (quotes, HTML, control characters, U+2028, bytes
// that are not UTF-8) and long texts shared by many findings.
func TestWriteJSONMatchesEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Allow from 10.0.0.0/8", " ", "  ", "\t", "\n", "\r", "\b", "\f", "\x00", "\x1f", "\x7f", `"`, `\`, "<", ">", "&",
		"é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x80", "/", "'"}
	text := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	shared := []string{strings.Repeat("a plain text shared by many findings. ", 4), strings.Repeat("a shared <text> & \"quotes\" ", 4), text()}
	for _, n := range []int{0, 1, 7, 1500} {
		r := &Report{Findings: []Finding{}}
		for i := range n {
			f := Finding{ID: "DIR-10", Severity: Warning, Pos: apacheconf.Pos{File: "/etc/apache2/httpd.conf", Line: i + 1, Col: rng.IntN(3)},
				Directive: text(), Change: shared[i%len(shared)], Fix: text()}
			if i%5 == 0 {
				f.ID, f.Severity, f.Pos.File, f.Fix = "AUTH-01", Info, text(), shared[(i/5)%len(shared)]
			}
			r.Findings = append(r.Findings, f)
		}
		out := make([]JSONFinding, 0, n)
		for _, f := range r.Findings {
			out = append(out, JSONFinding{ID: f.ID, Severity: string(f.Severity), File: f.Pos.File, Line: f.Pos.Line, Column: f.Pos.Col, Directive: f.Directive, Change: f.Change, Fix: f.Fix})
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d findings: WriteJSON differs from encoding/json:\n%s\nwant:\n%s", n, head(got.String()), head(want.String()))
		}
	}
}

// head returns the start of a long text, for a test's message.
func head(s string) string { return s[:min(len(s), 2000)] }
