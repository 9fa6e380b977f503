package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// What Apache refuses while it reads a request (server/protocol.c
// read_request_line, ap_get_mime_headers_core, ap_check_request_header),
// by the limits of the server the address chose, whichever host the Host
// header names (walk.Engine.RequestLimits: LimitRequestLine,
// LimitRequestFieldSize and LimitRequestFields of the first
// <VirtualHost> of the address, else the main server's):
//
//   - a request line longer than LimitRequestLine + 1 bytes: 414
//     (AH00565; ap_rgetline's buffer holds the limit plus CRLF, and a
//     line whose LF alone overruns it still fits);
//   - more header fields than LimitRequestFields (0: no limit): 400
//     (AH00563);
//   - a field line longer than LimitRequestFieldSize + 1 bytes: 400
//     (AH00561), or the fields of one name, merged with ", ", longer than
//     LimitRequestFieldSize: 400 (AH00560);
//   - an HTTP/1.1 request whose Host header is empty: 400 (AH00569).
//
// Go's server gives the fields parsed: each line is measured as
// "Name: value", the form every client writes (the whitespace around a
// value is not kept), Host, and Transfer-Encoding, which Go takes out of
// the header, count as one field each, a Content-Length or Trailer field
// beside a chunked body, which Go drops, is not counted, and the
// "Cache-Control: no-cache" Go adds beside "Pragma: no-cache" is (it may
// have been sent: counting it refuses rather than lets through).

// headLimits checks r against the server's limits.
func headLimits(r *http.Request, lim *translate.ServerLimits) (policy.Decision, bool) {
	var d policy.Decision
	d.Layer = policy.LayerRequest
	if n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto); n > lim.RequestLine+1 {
		d.Status = http.StatusRequestURITooLong
		d.AddLogs([]policy.LogLine{{Module: "core", Level: "info", Code: "AH00565",
			Subject: "request failed: client's request-line exceeds LimitRequestLine (longer than " + strconv.Itoa(lim.RequestLine) + ")"}})
		return d, false
	}
	fields := 0
	fieldLine := func(name string, n int) bool {
		fields++
		if lim.Fields > 0 && fields > lim.Fields {
			d.AddLogs([]policy.LogLine{{Module: "core", Level: "info", Code: "AH00563", Subject: "Number of request headers exceeds LimitRequestFields"}})
			return false
		}
		if len(name)+2+n > lim.FieldSize+1 {
			d.AddLogs([]policy.LogLine{{Module: "core", Level: "info", Code: "AH00561", Subject: "Request header exceeds LimitRequestFieldSize: " + logName(name)}})
			return false
		}
		return true
	}
	// An HTTP/1.1 request has one Host field (Go refuses it without);
	// an absolute-form target's host stands in for its value in Go's
	// form, so that only its count is known.
	if r.Proto == "HTTP/1.1" || r.Host != "" {
		n := len(r.Host)
		if strings.Contains(r.RequestURI, "://") {
			n = 0
		}
		if !fieldLine("Host", n) {
			d.Status = http.StatusBadRequest
			return d, false
		}
	}
	if len(r.TransferEncoding) > 0 && !fieldLine("Transfer-Encoding", len(strings.Join(r.TransferEncoding, ", "))) {
		d.Status = http.StatusBadRequest
		return d, false
	}
	for name, vs := range r.Header {
		merged := 2 * (len(vs) - 1)
		for _, v := range vs {
			if !fieldLine(name, len(v)) {
				d.Status = http.StatusBadRequest
				return d, false
			}
			merged += len(v)
		}
		if len(vs) > 1 && merged > lim.FieldSize {
			d.Status = http.StatusBadRequest
			d.AddLogs([]policy.LogLine{{Module: "core", Level: "info", Code: "AH00560", Subject: "Request header exceeds LimitRequestFieldSize after merging: " + logName(name)}})
			return d, false
		}
	}
	if r.Host == "" && r.Proto == "HTTP/1.1" {
		d.Status = http.StatusBadRequest // AH00569 (debug): HTTP/1.1 request without hostname
		return d, false
	}
	return d, true
}

// logName is a field name as Apache logs it: 80 bytes at most
// (field_name_len).
func logName(name string) string {
	if len(name) > 80 {
		return name[:80]
	}
	return name
}
