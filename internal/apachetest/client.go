package apachetest

import (
	"bufio"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Limits of [Do].
const (
	// RequestTimeout bounds one request, from dialling to the end of the
	// response.
	RequestTimeout = 10 * time.Second
	// MaxBody is the number of body bytes that Do keeps.
	MaxBody = 64 << 10
	// MaxRequestBody bounds the body a request line may ask Do to send
	// (body=N).
	MaxRequestBody = 1 << 20
)

// A Request is one request to replay: one line of a case's requests file.
type Request struct {
	Method string
	// Target is the request target, sent exactly as written.
	Target string
	// ClientIP is sent as X-Forwarded-For (omitted if empty).
	ClientIP string
	// User and Password are sent as Basic credentials if HasAuth is set.
	User, Password string
	HasAuth        bool
	// Digest answers the server's Digest challenge with User and
	// Password (d=USER:PASSWORD): the request is sent once without
	// credentials and, when the answer is a 401 with a Digest challenge,
	// again with the response to it (qop=auth, nc 1); the second answer
	// is the request's.
	Digest bool
	// Header holds extra header fields, in order, as name and value. A field
	// named Host, Connection, X-Forwarded-For or Authorization replaces the
	// one Do would send.
	Header [][2]string
	// Body is the size of the request body: that many bytes "x", sent
	// with Content-Length, or as one chunk when a Header field
	// Transfer-Encoding says chunked. 0: no body (and no Content-Length).
	Body int
	// Proto is the protocol of the request line, "HTTP/1.1" when empty.
	Proto string
	// TLS sends the request over TLS ([DoTLS]), with the client
	// certificate Cert of the case's certs file when set (tls.go).
	TLS  bool
	Cert string
	// Want is the expected answer: a status code such as "403", or "other"
	// (see [Response.Matches]); empty if the author stated none.
	Want string
	// Line is the line number of the request in its file, and Text the line
	// itself.
	Line int
	Text string
}

// String returns the request line as written, or a reconstruction of it.
func (r Request) String() string {
	if r.Text != "" {
		return r.Text
	}
	parts := []string{r.Method, r.Target, r.ClientIP}
	if r.HasAuth && r.Digest {
		parts = append(parts, "d="+r.User+":"+r.Password)
	} else if r.HasAuth {
		parts = append(parts, "u="+r.User+":"+r.Password)
	}
	for _, h := range r.Header {
		parts = append(parts, "h="+h[0]+":"+strings.ReplaceAll(h[1], " ", "%20"))
	}
	if r.Body > 0 {
		parts = append(parts, "body="+strconv.Itoa(r.Body))
	}
	if r.Proto != "" {
		parts = append(parts, "proto="+r.Proto)
	}
	if r.Cert != "" {
		parts = append(parts, "cert="+r.Cert)
	} else if r.TLS {
		parts = append(parts, "tls")
	}
	if r.Want != "" {
		parts = append(parts, "want="+r.Want)
	}
	return strings.Join(parts, " ")
}

// Wire returns the bytes that [Do] sends for r: the request line with the
// target as written, then Host: 127.0.0.1, Connection: close,
// X-Forwarded-For (if ClientIP is set), Authorization (if HasAuth) and the
// extra header fields. A request with a Transfer-Encoding field of
// "chunked" (any case) gets an empty chunked body ("0" CRLF CRLF), so
// that the servers need not wait for one. With Body, the body follows:
// Content-Length is added unless chunked; a chunked one is sent as one
// chunk of Body bytes before the last chunk. Proto replaces HTTP/1.1 in
// the request line.
func (r Request) Wire() []byte {
	var b strings.Builder
	proto := r.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", r.Method, r.Target, proto)
	given := make(map[string]bool)
	for _, h := range r.Header {
		given[http.CanonicalHeaderKey(h[0])] = true
	}
	add := func(name, value string) {
		if !given[name] {
			fmt.Fprintf(&b, "%s: %s\r\n", name, value)
		}
	}
	add("Host", "127.0.0.1")
	add("Connection", "close")
	if r.ClientIP != "" {
		add("X-Forwarded-For", r.ClientIP)
	}
	if r.HasAuth && !r.Digest {
		add("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(r.User+":"+r.Password)))
	}
	chunked := false
	for _, h := range r.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
		chunked = chunked || strings.EqualFold(h[0], "Transfer-Encoding") && strings.EqualFold(h[1], "chunked")
	}
	if r.Body > 0 && !chunked {
		add("Content-Length", strconv.Itoa(r.Body))
	}
	b.WriteString("\r\n")
	if chunked && r.Body > 0 {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", r.Body, strings.Repeat("x", r.Body))
	} else if r.Body > 0 {
		b.WriteString(strings.Repeat("x", r.Body))
	}
	if chunked {
		b.WriteString("0\r\n\r\n")
	}
	return []byte(b.String())
}

// A Response is what a server answered, reduced to what the differential
// test compares.
type Response struct {
	Status int
	// WWWAuthenticate holds the WWW-Authenticate fields, joined by ", ".
	WWWAuthenticate string
	// Location is the Location field of the response, if any.
	Location string
	// Server is the Server field of the response, if any: Apache names
	// itself there, orderly's own answers have none.
	Server string
	// Body holds at most MaxBody bytes of the body.
	Body []byte
	// TLS is set when the server refused the TLS connection instead of
	// answering: TLSHandshake or TLSRenegotiation (tls.go).
	TLS string
}

// Do sends req to addr (host:port) over a new TCP connection as raw
// HTTP/1.1 (see [Request.Wire]), so that the target is not normalised, and
// reads the response. The whole exchange is bounded by [RequestTimeout].
func Do(addr string, req Request) (Response, error) {
	if req.HasAuth && req.Digest {
		return doDigest(addr, req)
	}
	return do(addr, req)
}

// doDigest sends req without credentials, then, if the answer challenges
// for Digest, with the response to the challenge, as a client such as
// curl --digest does.
func doDigest(addr string, req Request) (Response, error) {
	first := req
	first.HasAuth = false
	resp, err := do(addr, first)
	if err != nil || resp.Status != 401 {
		return resp, err
	}
	auth, ok := DigestResponse(resp.WWWAuthenticate, req.Method, req.Target, req.User, req.Password)
	if !ok {
		return resp, nil
	}
	second := first
	second.Header = append(append([][2]string(nil), first.Header...), [2]string{"Authorization", auth})
	return do(addr, second)
}

// DigestResponse is the Authorization value that answers a Digest
// challenge (RFC 7616 with qop=auth and MD5, nonce count 1), and false
// when challenge has no Digest challenge.
func DigestResponse(challenge, method, uri, user, password string) (string, bool) {
	i := strings.Index(challenge, "Digest ")
	if i < 0 {
		return "", false
	}
	params := map[string]string{}
	s := challenge[i+len("Digest "):]
	for s != "" {
		s = strings.TrimLeft(s, " ,")
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			val, s = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexAny(rest, ", ")
			if end < 0 {
				end = len(rest)
			}
			val, s = rest[:end], rest[end:]
		}
		params[strings.ToLower(strings.TrimSpace(name))] = val
	}
	realm, nonce := params["realm"], params["nonce"]
	if nonce == "" {
		return "", false
	}
	const nc, cnonce = "00000001", "0a4f113b"
	h := func(s string) string { return fmt.Sprintf("%x", md5.Sum([]byte(s))) }
	ha1 := h(user + ":" + realm + ":" + password)
	ha2 := h(method + ":" + uri)
	response := h(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":auth:" + ha2)
	v := fmt.Sprintf(`Digest username="%s", realm="%s", nonce="%s", uri="%s", algorithm=MD5, response="%s", qop=auth, nc=%s, cnonce="%s"`,
		user, realm, nonce, uri, response, nc, cnonce)
	if op, ok := params["opaque"]; ok {
		v += fmt.Sprintf(`, opaque="%s"`, op)
	}
	return v, true
}

func do(addr string, req Request) (Response, error) {
	c, err := net.DialTimeout("tcp", addr, RequestTimeout)
	if err != nil {
		return Response{}, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(RequestTimeout)); err != nil {
		return Response{}, err
	}
	if _, err := c.Write(req.Wire()); err != nil {
		return Response{}, fmt.Errorf("sending %q: %v", req.String(), err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: req.Method})
	if err != nil {
		return Response{}, fmt.Errorf("reading the response to %q: %v", req.String(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return Response{}, fmt.Errorf("reading the body of the response to %q: %v", req.String(), err)
	}
	return Response{
		Status:          resp.StatusCode,
		WWWAuthenticate: strings.Join(resp.Header.Values("WWW-Authenticate"), ", "),
		Location:        resp.Header.Get("Location"),
		Server:          resp.Header.Get("Server"),
		Body:            body,
	}, nil
}

// Class returns the class by which the differential test compares answers:
// "400", "401 realm=\"X\"" (a 401 with the realm of its first challenge, or
// just "401" if it has none), "403", "500", or "other".
func (r Response) Class() string {
	if r.TLS != "" {
		return "tls refused at the " + r.TLS
	}
	switch r.Status {
	case 400, 403, 500:
		return strconv.Itoa(r.Status)
	case 401:
		scheme := ""
		if strings.HasPrefix(r.WWWAuthenticate, "Digest ") {
			scheme = "digest "
		}
		if realm, ok := Realm(r.WWWAuthenticate); ok {
			return "401 " + scheme + "realm=" + strconv.Quote(realm)
		}
		return "401"
	}
	return "other"
}

// Matches reports whether r is the answer that want (a request's want=
// value) expects: "other" matches any response of [Response.Class] "other"
// (so 200 and 404 alike), and a status code matches that status exactly.
func (r Response) Matches(want string) bool {
	if want == "tls" || r.TLS != "" {
		return want == "tls" && r.TLS != ""
	}
	if want == "other" {
		return r.Class() == "other"
	}
	return want == strconv.Itoa(r.Status)
}

// Realm returns the value of the first realm parameter in a WWW-Authenticate
// field value, such as `Basic realm="Members Only"`.
func Realm(challenge string) (string, bool) {
	s := challenge
	for {
		i := strings.Index(strings.ToLower(s), "realm")
		if i < 0 {
			return "", false
		}
		// The parameter name must start a word: after a space or a comma.
		before := i == 0 || s[i-1] == ' ' || s[i-1] == ',' || s[i-1] == '\t'
		rest := strings.TrimLeft(s[i+len("realm"):], " \t")
		if !before || !strings.HasPrefix(rest, "=") {
			s = s[i+len("realm"):]
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		if !strings.HasPrefix(rest, `"`) {
			// A token.
			end := strings.IndexAny(rest, " \t,")
			if end < 0 {
				end = len(rest)
			}
			return rest[:end], true
		}
		// A quoted string, with backslash escapes.
		var v strings.Builder
		for j := 1; j < len(rest); j++ {
			switch rest[j] {
			case '\\':
				if j+1 < len(rest) {
					j++
					v.WriteByte(rest[j])
				}
			case '"':
				return v.String(), true
			default:
				v.WriteByte(rest[j])
			}
		}
		return v.String(), true // unterminated: take what there is
	}
}
