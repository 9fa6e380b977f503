package proxy

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// A forward-auth request carries no body: the front proxy keeps it. Where
// LimitRequestBody applies, the front proxy must say how long the body is,
// in these headers (nginx: proxy_set_header X-Original-Content-Length
// $content_length; proxy_set_header X-Original-Transfer-Encoding
// $http_transfer_encoding), or orderly cannot decide as Apache would and
// answers 500.
const (
	originalLength   = "X-Original-Content-Length"
	originalEncoding = "X-Original-Transfer-Encoding"
)

// bodyDesc is what the front proxy said of the body of the request it
// asks about.
type bodyDesc struct {
	described bool  // the front proxy sent either header
	length    int64 // -1: not known (chunked)
}

type bodyDescKey struct{}

// defaultLimit24 is Apache 2.4.54's default LimitRequestBody.
const defaultLimit24 = 1 << 30

// describeBody reads the body headers of a forward-auth request into its
// context.
func describeBody(r *http.Request) *http.Request {
	cl, te := r.Header.Values(originalLength), r.Header.Values(originalEncoding)
	d := bodyDesc{}
	if len(cl) > 0 || len(te) > 0 {
		d.described = true
		switch {
		case len(te) > 0 && strings.TrimSpace(strings.Join(te, "")) != "":
			d.length = -1
		case len(cl) == 1 && strings.TrimSpace(cl[0]) != "":
			n, err := strconv.ParseInt(strings.TrimSpace(cl[0]), 10, 64)
			if err != nil || n < 0 {
				d.length = -1
			} else {
				d.length = n
			}
		case len(cl) > 1:
			d.length = -1
		}
	}
	return r.WithContext(context.WithValue(r.Context(), bodyDescKey{}, d))
}

// authBodyLimit is bodyLimit for a forward-auth request: the body is
// judged by what the front proxy said of it; where LimitRequestBody
// applies and the length is not known, orderly fails closed (500).
func authBodyLimit(r *http.Request, res *walk.Result) {
	limit, applies := res.BodyLimit()
	if !applies {
		return
	}
	d, _ := r.Context().Value(bodyDescKey{}).(bodyDesc)
	if !d.described && limit >= defaultLimit24 {
		// Apache 2.4.54's default limit, 1 GiB, set by no directive: a
		// front proxy that says nothing of the body sends none that
		// size (nginx's own client_max_body_size is 1 MiB by default).
		return
	}
	switch {
	case d.described && d.length >= 0:
		if d.length > limit {
			tooLarge(res, "AH01588", "Requested content-length of "+strconv.FormatInt(d.length, 10)+" is larger than the configured limit of "+strconv.FormatInt(limit, 10))
		}
	default:
		res.Decision = policy.Decision{Status: http.StatusInternalServerError, Layer: policy.LayerRequest, Rule: res.Rule}
	}
}
