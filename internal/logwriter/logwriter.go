// Package logwriter hands log lines from request goroutines to one
// goroutine that writes them, so that a slow disk or a blocked stdout
// never holds a request, and no lock is held across a write (issue 20).
//
// It lives in internal rather than in proxy because it is plumbing of
// orderly serve, not part of the request path: proxy keeps writing to a
// plain io.Writer (a bytes.Buffer in its tests, synchronously), and
// cmd/orderly puts a Writer in front of each log output it opens.
package logwriter

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// DefaultQueue is how many Write calls a Writer holds queued when New is
// given no size: 4096, some 1 MiB of access-log lines (about 250 bytes
// each), enough for a burst of a few thousand requests while the disk
// stalls, small enough that a stuck output does not grow orderly's
// memory without bound.
const DefaultQueue = 4096

// maxBatch is how many bytes the writing goroutine gathers from the queue
// into one write to the output at most; maxPooled is the largest copy
// buffer kept for reuse (a rare huge line is not held in the pool).
const (
	maxBatch  = 64 << 10
	maxPooled = 16 << 10
)

// ErrFull is returned by Write when the queue is full and the lines were
// dropped (and counted).
var ErrFull = errors.New("logwriter: queue full, lines dropped")

// ErrClosed is returned by Write after Close; the lines were dropped
// (and counted).
var ErrClosed = errors.New("logwriter: closed, lines dropped")

// Counter counts dropped lines; a prometheus.Counter is one.
type Counter interface {
	Add(float64)
}

// Writer is an io.Writer that queues each Write for one goroutine that
// writes to the output in order. Each Write must be one or more complete
// lines; it reaches the output whole, in one write of the output, never
// split and never interleaved with another Write, so callers need no lock
// of their own. Writes from one goroutine reach the output in the order
// made. A Write never blocks on the output: it copies p into a pooled
// buffer and queues it; when the queue is full the lines are dropped and
// added to the drop counter. The writing goroutine writes what is queued
// in batches of up to 64 KiB, one output write each; lines whose write
// fails are counted as dropped too.
//
// Flush waits for what was queued before it; Close drains the queue and
// stops the goroutine. Write after Close drops and counts its lines and
// returns ErrClosed. Close does not close the output.
type Writer struct {
	out     io.Writer
	dropped Counter
	queue   chan *[]byte
	bufs    sync.Pool // *[]byte copy buffers

	// mu makes Close wait for the Writes under way: they hold it shared
	// for a check and a send that never blocks; Close holds it alone to
	// set closed, after which nothing is queued.
	mu     sync.RWMutex
	closed bool

	flush   chan chan struct{} // Flush's requests
	stop    chan struct{}      // closed by Close
	stopped chan struct{}      // closed when the goroutine has drained and returned
	once    sync.Once
}

// New returns a Writer queueing at most queue Writes (DefaultQueue when
// queue <= 0) for out, counting the lines it drops in dropped (not nil),
// and starts its goroutine; Close stops it.
func New(out io.Writer, queue int, dropped Counter) *Writer {
	if queue <= 0 {
		queue = DefaultQueue
	}
	w := &Writer{
		out:     out,
		dropped: dropped,
		queue:   make(chan *[]byte, queue),
		flush:   make(chan chan struct{}),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	w.bufs.New = func() any { b := make([]byte, 0, 512); return &b }
	go w.run()
	return w
}

// Write queues a copy of p, one or more complete lines, and returns
// len(p); when the queue is full (ErrFull) or the Writer closed
// (ErrClosed) it drops them, counts them and returns 0.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b := w.bufs.Get().(*[]byte)
	*b = append((*b)[:0], p...)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		w.drop(b)
		return 0, ErrClosed
	}
	select {
	case w.queue <- b:
		w.mu.RUnlock()
		return len(p), nil
	default:
		w.mu.RUnlock()
		w.drop(b)
		return 0, ErrFull
	}
}

// drop counts the lines of a Write not queued and recycles its copy.
func (w *Writer) drop(b *[]byte) {
	w.dropped.Add(float64(lines(*b)))
	w.recycle(b)
}

// lines is how many lines p holds: its newlines, or one for a last line
// without one.
func lines(p []byte) int {
	n := bytes.Count(p, []byte{'\n'})
	if len(p) > 0 && p[len(p)-1] != '\n' {
		n++
	}
	return n
}

// recycle returns a copy buffer to the pool, unless it grew too large to
// keep.
func (w *Writer) recycle(b *[]byte) {
	if cap(*b) <= maxPooled {
		w.bufs.Put(b)
	}
}

// Flush returns when every Write that returned before it was called has
// been written to the output (at once after Close, which drained them).
func (w *Writer) Flush() {
	done := make(chan struct{})
	select {
	case w.flush <- done:
		<-done
	case <-w.stopped:
	}
}

// Close writes what is queued, stops the goroutine and returns when it
// has; later Writes are dropped and counted. Calling it again does
// nothing. It does not close the output.
func (w *Writer) Close() error {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.stop)
	})
	<-w.stopped
	return nil
}

// run is the writing goroutine: it writes each Write queued, gathering
// what else is queued behind it into the same output write, until Close.
func (w *Writer) run() {
	defer close(w.stopped)
	var batch []byte
	for {
		select {
		case b := <-w.queue:
			batch = w.write(w.gather(append(batch[:0], *b...), b))
		case done := <-w.flush:
			batch = w.drain(batch)
			close(done)
		case <-w.stop:
			w.drain(batch)
			return
		}
	}
}

// gather recycles b, already appended to batch, and appends what else is
// queued, up to maxBatch bytes, without waiting.
func (w *Writer) gather(batch []byte, b *[]byte) []byte {
	w.recycle(b)
	for len(batch) < maxBatch {
		select {
		case b := <-w.queue:
			batch = append(batch, *b...)
			w.recycle(b)
		default:
			return batch
		}
	}
	return batch
}

// drain writes everything queued, in batches, and returns batch for
// reuse.
func (w *Writer) drain(batch []byte) []byte {
	for {
		select {
		case b := <-w.queue:
			batch = w.write(w.gather(append(batch[:0], *b...), b))
		default:
			return batch
		}
	}
}

// write writes batch to the output, counting the lines a failed write
// left unwritten as dropped, and returns batch emptied for reuse (or a
// fresh one if it grew beyond maxBatch with a huge line).
func (w *Writer) write(batch []byte) []byte {
	n, err := w.out.Write(batch)
	if err != nil && n < len(batch) {
		w.dropped.Add(float64(lines(batch[max(n, 0):])))
	}
	if cap(batch) > 2*maxBatch {
		return nil
	}
	return batch[:0]
}
