package proxy

import (
	"errors"
	"io"
	"sync/atomic"
)

// clientBody is a request body on its way to the backend that remembers
// whether reading it from the client failed: a malformed chunked coding,
// an oversized chunk, a client gone mid-body. The transport then fails
// too, but the fault is the client's: the backend must not be marked down
// for it (passive detection), or any client could take every backend out
// of service with one request (TestSecurityCorpus,
// smuggling/chunk-size-overflow), and the answer is Apache's for a body it
// cannot read, 400, not 502.
type clientBody struct {
	io.ReadCloser
	failed atomic.Bool
}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.failed.Store(true)
	}
	return n, err
}

// clientFault reports whether a failed backend request failed because the
// client's body could not be read.
func (i *passInfo) clientFault() bool {
	return i != nil && i.body != nil && i.body.failed.Load()
}
