package proxy

import (
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/orderly-proxy/orderly/policy"
)

// recorder notes the status and size of a response for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and Hijack.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// writeAccess writes one access-log line: Apache's combined format, then
// rule=<ID of the deciding rule, "-" if none> decision=<allow, deny,
// challenge or error> generation=<policy generation> scope=<scope name>
// policy=<the policy that decided: legacy or native>.
func (h *Handler) writeAccess(rec *recorder, r *http.Request, client netip.Addr, start time.Time, d *policy.Decision, gen uint64, v *verdict) {
	b := make([]byte, 0, 256)
	host := "-"
	if client.IsValid() {
		host = client.String()
	}
	b = append(b, host...)
	b = append(b, " - "...)
	b = appendField(b, d.User)
	b = append(b, " ["...)
	b = start.AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, "] \""...)
	b = appendEscaped(b, r.Method+" "+r.RequestURI+" "+r.Proto)
	b = append(b, "\" "...)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if rec.bytes == 0 {
		b = append(b, '-')
	} else {
		b = strconv.AppendInt(b, rec.bytes, 10)
	}
	b = append(b, " \""...)
	b = appendEscaped(b, orDash(r.Header.Get("Referer")))
	b = append(b, "\" \""...)
	b = appendEscaped(b, orDash(r.Header.Get("User-Agent")))
	b = append(b, "\" rule="...)
	if d.Rule != nil {
		b = append(b, d.Rule.ID...)
	} else {
		b = append(b, '-')
	}
	b = append(b, " decision="...)
	b = append(b, decisionName(d)...)
	b = append(b, " generation="...)
	b = strconv.AppendUint(b, gen, 10)
	if v != nil {
		b = append(b, " scope="...)
		b = append(b, v.scope.Name...)
		b = append(b, " policy="...)
		b = append(b, v.policy...)
	}
	b = append(b, '\n')
	h.cfg.AccessLog.Write(b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// appendField appends s escaped, or "-" when empty.
func appendField(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	return appendEscaped(b, s)
}

// appendEscaped escapes as Apache's ap_escape_logitem: quotes and
// backslashes with a backslash, control and non-ASCII bytes as \xhh, so
// that a client cannot forge log lines.
func appendEscaped(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20 || c >= 0x7f:
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

// decisionName is the decision label of the request metrics.
func decisionName(d *policy.Decision) string {
	switch {
	case d.Status == 0:
		return "allow"
	case d.Status == http.StatusUnauthorized:
		return "challenge"
	case d.Status == http.StatusForbidden:
		return "deny"
	}
	return "error"
}
