package logwriter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// output records what the writing goroutine writes; gate, when set,
// holds each write until a value is received from it, after telling
// entered; delay slows each write down; fail makes every write fail
// after writing half.
type output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	writes  int
	gate    chan struct{}
	entered chan struct{}
	delay   time.Duration
	fail    bool
}

func (o *output) Write(p []byte) (int, error) {
	if o.gate != nil {
		o.entered <- struct{}{}
		<-o.gate
	}
	time.Sleep(o.delay)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	if o.fail {
		o.buf.Write(p[:len(p)/2])
		return len(p) / 2, errors.New("disk full")
	}
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func newCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "dropped"})
}

// TestConcurrentWholeInOrder: Writes from many goroutines, some of two
// lines, reach the output whole, each goroutine's in its order, and none
// is lost or dropped.
func TestConcurrentWholeInOrder(t *testing.T) {
	for _, tc := range []struct {
		name          string
		writers, each int
		queue         int
		pad           int // bytes of padding a line, to cross maxBatch
	}{
		{"small lines, default queue", 8, 500, 0, 10},
		{"long lines over several batches", 4, 200, 64, 3000},
		{"queue of one", 4, 100, 1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &output{}
			dropped := newCounter()
			w := New(out, tc.queue, dropped)
			pad := strings.Repeat("x", tc.pad)
			var wg sync.WaitGroup
			for g := range tc.writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < tc.each; {
						// Every third Write is two lines in one call; a
						// full queue of one is retried, never skipped.
						var p string
						if i%3 == 0 && i+1 < tc.each {
							p = fmt.Sprintf("%d %d %s\n%d %d %s\n", g, i, pad, g, i+1, pad)
						} else {
							p = fmt.Sprintf("%d %d %s\n", g, i, pad)
						}
						if _, err := w.Write([]byte(p)); errors.Is(err, ErrFull) {
							time.Sleep(10 * time.Microsecond)
							continue
						} else if err != nil {
							t.Error(err)
							return
						}
						i += strings.Count(p, "\n")
					}
				}()
			}
			wg.Wait()
			w.Close()
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != tc.writers*tc.each {
				t.Fatalf("%d lines written, want %d", len(lines), tc.writers*tc.each)
			}
			next := make([]int, tc.writers)
			for _, l := range lines {
				f := strings.Fields(l)
				if len(f) != 3 || f[2] != pad {
					t.Fatalf("line not whole: %.80q", l)
				}
				g, _ := strconv.Atoi(f[0])
				i, _ := strconv.Atoi(f[1])
				if i != next[g] {
					t.Fatalf("writer %d: line %d after line %d", g, i, next[g]-1)
				}
				next[g]++
			}
		})
	}
}

// TestDrop: with the output blocked and the queue full, a Write returns
// at once, its lines dropped and counted; what was queued is written,
// in order, once the output moves, and the dropped lines are not.
func TestDrop(t *testing.T) {
	for _, tc := range []struct {
		name        string
		queue       int
		drop        string
		wantDropped float64
	}{
		{"one line", 2, "dropped\n", 1},
		{"three lines in one Write", 2, "d1\nd2\nd3\n", 3},
		{"a last line without newline", 1, "d1\nd2", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &output{gate: make(chan struct{}), entered: make(chan struct{})}
			dropped := newCounter()
			w := New(out, tc.queue, dropped)
			var want strings.Builder
			write := func(s string) {
				if _, err := w.Write([]byte(s)); err != nil {
					t.Fatalf("Write(%q): %v", s, err)
				}
				want.WriteString(s)
			}
			write("first\n")
			<-out.entered // the goroutine holds "first" in a blocked write
			for i := range tc.queue {
				write(fmt.Sprintf("queued %d\n", i))
			}
			done := make(chan error)
			go func() {
				_, err := w.Write([]byte(tc.drop))
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrFull) {
					t.Fatalf("Write on a full queue: %v, want ErrFull", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Write on a full queue blocked")
			}
			if got := testutil.ToFloat64(dropped); got != tc.wantDropped {
				t.Errorf("dropped %v lines, want %v", got, tc.wantDropped)
			}
			go func() {
				for range out.entered {
					out.gate <- struct{}{}
				}
			}()
			out.gate <- struct{}{}
			w.Close()
			close(out.entered)
			if got := out.String(); got != want.String() {
				t.Errorf("output %q, want %q", got, want.String())
			}
		})
	}
}

// TestFlushCloseDrain: Flush and Close, called while the output is
// blocked with lines queued behind it, return only once every line
// written before them is in the output (several slow writes: 200 KiB
// in batches of 64 KiB). Repeated, as the writing goroutine's choice
// between a queued line and a flush request is random.
func TestFlushCloseDrain(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*Writer)
	}{
		{"Flush", (*Writer).Flush},
		{"Close", func(w *Writer) { w.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 10 {
				out := &output{gate: make(chan struct{}), entered: make(chan struct{}), delay: time.Millisecond}
				dropped := newCounter()
				w := New(out, 0, dropped)
				want := "first\n"
				w.Write([]byte(want))
				<-out.entered // the goroutine holds "first" in a blocked write
				for i := range 1000 {
					s := fmt.Sprintf("line %04d %s\n", i, strings.Repeat("x", 190))
					w.Write([]byte(s))
					want += s
				}
				done := make(chan struct{})
				go func() {
					tc.end(w)
					close(done)
				}()
				go func() {
					for range out.entered {
						out.gate <- struct{}{}
					}
				}()
				out.gate <- struct{}{}
				<-done
				if got := out.String(); got != want {
					t.Fatalf("%s returned with %d of %d bytes written", tc.name, len(got), len(want))
				}
				if got := testutil.ToFloat64(dropped); got != 0 {
					t.Errorf("dropped %v lines, want 0", got)
				}
				w.Close()
				close(out.entered)
			}
		})
	}
}

// TestWriteError: the lines a failed output write left unwritten are
// counted as dropped.
func TestWriteError(t *testing.T) {
	out := &output{fail: true}
	dropped := newCounter()
	w := New(out, 0, dropped)
	w.Write([]byte("a\nb\nc\nd\n"))
	w.Close()
	if got := out.String(); got != "a\nb\n" {
		t.Errorf("output %q, want the half written", got)
	}
	if got := testutil.ToFloat64(dropped); got != 2 {
		t.Errorf("dropped %v lines, want 2", got)
	}
}

// TestBatches: lines queued while the output is busy go out in one write.
func TestBatches(t *testing.T) {
	out := &output{gate: make(chan struct{}), entered: make(chan struct{})}
	w := New(out, 0, newCounter())
	w.Write([]byte("first\n"))
	<-out.entered
	for i := range 10 {
		w.Write([]byte(fmt.Sprintf("queued %d\n", i)))
	}
	out.gate <- struct{}{}
	<-out.entered // the second write: all ten queued lines
	out.gate <- struct{}{}
	w.Flush()
	if out.writes != 2 {
		t.Errorf("%d writes, want 2 (the first line, then the ten queued behind it)", out.writes)
	}
	w.Close()
}

// TestAfterClose: a Write after Close returns ErrClosed at once with its
// lines counted; Flush and Close after Close return.
func TestAfterClose(t *testing.T) {
	out := &output{}
	dropped := newCounter()
	w := New(out, 0, dropped)
	w.Write([]byte("before\n"))
	w.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if n, err := w.Write([]byte("after\nafter\n")); n != 0 || !errors.Is(err, ErrClosed) {
			t.Errorf("Write after Close: %d, %v; want 0, ErrClosed", n, err)
		}
		w.Flush()
		w.Close()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Write, Flush or Close after Close blocked")
	}
	if got := testutil.ToFloat64(dropped); got != 2 {
		t.Errorf("dropped %v lines, want 2", got)
	}
	if got := out.String(); got != "before\n" {
		t.Errorf("output %q, want %q", got, "before\n")
	}
}

// BenchmarkWrite measures the hand-off of an access-log line from
// parallel request goroutines (allocations: the pooled copy buffers make
// it none in the steady state).
func BenchmarkWrite(b *testing.B) {
	w := New(io.Discard, 0, newCounter())
	defer w.Close()
	line := []byte(strings.Repeat("x", 249) + "\n")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Write(line)
		}
	})
}
