package proxy

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// LimitRequestBody as Apache applies it (modules/http/http_filters.c
// ap_http_filter): a body over the limit in force for the answer
// (walk.Result.BodyLimit) is answered 413. A Content-Length over it is
// refused before anything is read (AH01588). A chunked body is counted as
// it is read (AH01591): forwarded through a reader that fails the request
// past the limit, so that nothing unbounded is held, or, for a refusal
// Apache 2.4 answers only once it has discarded the body, discarded up
// to the limit here. Without a limit in force nothing is wrapped.

// errBodyTooLarge is what a limitedBody's Read returns past its limit.
var errBodyTooLarge = errors.New("request body larger than LimitRequestBody")

// limitedBody counts a chunked body on its way to the backend.
type limitedBody struct {
	io.ReadCloser
	limit int64
	n     atomic.Int64 // read so far; the transport reads, the error handler looks
	over  atomic.Bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.over.Load() {
		return 0, errBodyTooLarge
	}
	n, err := b.ReadCloser.Read(p)
	if b.n.Add(int64(n)) > b.limit {
		b.over.Store(true)
		return 0, errBodyTooLarge
	}
	return n, err
}

// bodyLimit applies LimitRequestBody to the decision res of r in force:
// it turns res into a 413 where Apache answers one before r reaches the
// backend, and, for a chunked body orderly forwards, wraps r.Body to
// count it.
func bodyLimit(r *http.Request, res *walk.Result) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	limit, applies := res.BodyLimit()
	if !applies {
		return
	}
	if r.ContentLength > limit {
		tooLarge(res, "AH01588", "Requested content-length of "+strconv.FormatInt(r.ContentLength, 10)+" is larger than the configured limit of "+strconv.FormatInt(limit, 10))
		return
	}
	if r.ContentLength > 0 {
		return
	}
	if res.Allowed() {
		r.Body = &limitedBody{ReadCloser: r.Body, limit: limit}
		return
	}
	// Apache 2.4 discards the body before its answer (ap_die).
	n, err := io.Copy(io.Discard, io.LimitReader(r.Body, limit+1))
	switch {
	case n > limit:
		tooLarge(res, "AH01591", "Read content length of "+strconv.FormatInt(n, 10)+" is larger than the configured limit of "+strconv.FormatInt(limit, 10))
	case err != nil:
		res.Decision = policy.Decision{Status: http.StatusBadRequest, Layer: policy.LayerRequest}
	}
}

// tooLarge makes res a 413, with the line Apache logs at info level.
func tooLarge(res *walk.Result, code, msg string) {
	logs := append([]policy.LogLine(nil), res.Logs()...) // Logs is the decision's own array
	res.Decision = policy.Decision{Status: http.StatusRequestEntityTooLarge, Layer: policy.LayerRequest, Rule: res.Rule}
	res.SetLogs(logs)
	res.AddLogs([]policy.LogLine{{Module: "http", Level: "info", Code: code, Subject: msg}})
}

// faultStatus is the answer to a request whose body could not be read
// while it was forwarded: 413 past LimitRequestBody, else 400.
func (i *passInfo) faultStatus() (int, *limitedBody) {
	if i != nil && i.body != nil {
		if lb, ok := i.body.ReadCloser.(*limitedBody); ok && lb.over.Load() {
			return http.StatusRequestEntityTooLarge, lb
		}
	}
	return http.StatusBadRequest, nil
}
