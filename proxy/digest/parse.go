package digest

import (
	"net/http"
	"strings"
)

// HeaderStatus is what parsing found in the Authorization field, as
// enum hdr_sts of mod_auth_digest.
type HeaderStatus int

const (
	// NoHeader: the request has no Authorization field. Apache answers
	// 401 with a challenge and logs nothing.
	NoHeader HeaderStatus = iota
	// NotDigest: the field's scheme is not Digest. Apache answers 401
	// with a challenge and logs AH01781.
	NotDigest
	// Invalid: a Digest field that lacks a parameter Apache needs (see
	// Parse). Apache answers 401 with a challenge (never 400) and logs
	// AH01782.
	Invalid
	// Valid: a Digest field with every parameter Apache needs.
	Valid
)

func (s HeaderStatus) String() string {
	switch s {
	case NoHeader:
		return "no header"
	case NotDigest:
		return "not digest"
	case Invalid:
		return "invalid"
	case Valid:
		return "valid"
	}
	return "HeaderStatus(?)"
}

// HTTPStatus is the status Apache answers for a request whose header has
// this status when the header is the reason it fails: 401 for all but
// Valid (0: the header does not decide).
func (s HeaderStatus) HTTPStatus() int {
	if s == Valid {
		return 0
	}
	return http.StatusUnauthorized
}

// LogCode is the message Apache logs for a header in this status: AH01781
// (wrong scheme), AH01782 (invalid), or none.
func (s HeaderStatus) LogCode() string {
	switch s {
	case NotDigest:
		return "AH01781"
	case Invalid:
		return "AH01782"
	}
	return ""
}

// A Param names one parameter of a Digest Authorization field.
type Param uint16

// The parameters mod_auth_digest reads; it ignores every other one.
const (
	ParamUsername Param = 1 << iota
	ParamRealm
	ParamNonce
	ParamURI
	ParamResponse
	ParamAlgorithm
	ParamCNonce
	ParamOpaque
	ParamQOP
	ParamNC
)

// paramNames are the parameter names, in the order Encode writes them.
var paramNames = []struct {
	p    Param
	name string
}{
	{ParamUsername, "username"},
	{ParamRealm, "realm"},
	{ParamNonce, "nonce"},
	{ParamURI, "uri"},
	{ParamResponse, "response"},
	{ParamAlgorithm, "algorithm"},
	{ParamCNonce, "cnonce"},
	{ParamOpaque, "opaque"},
	{ParamQOP, "qop"},
	{ParamNC, "nc"},
}

// Credentials are the parameters of a Digest Authorization field, as
// digest_header_rec holds them. A parameter can be present with an empty
// value (a bare "username," or username=""), which is not the same as
// absent: Present tells them apart.
type Credentials struct {
	// Scheme is the first word of the field ("Digest" in any case for
	// a Digest field).
	Scheme string

	Username  string
	Realm     string
	Nonce     string
	URI       string
	Response  string // the response parameter (resp->digest)
	Algorithm string
	CNonce    string
	Opaque    string
	QOP       string // the qop parameter (resp->message_qop)
	NC        string // the nc parameter (resp->nonce_count)

	// Present holds the parameters the field has.
	Present Param

	// clientID is the opaque as a client number (resp->opaque_num): set
	// only for a Valid field whose opaque is a hex number in 1..2^32-1.
	clientID uint32
}

// Has reports whether the field has parameter p.
func (c *Credentials) Has(p Param) bool { return c.Present&p != 0 }

func (c *Credentials) field(p Param) *string {
	switch p {
	case ParamUsername:
		return &c.Username
	case ParamRealm:
		return &c.Realm
	case ParamNonce:
		return &c.Nonce
	case ParamURI:
		return &c.URI
	case ParamResponse:
		return &c.Response
	case ParamAlgorithm:
		return &c.Algorithm
	case ParamCNonce:
		return &c.CNonce
	case ParamOpaque:
		return &c.Opaque
	case ParamQOP:
		return &c.QOP
	case ParamNC:
		return &c.NC
	}
	return nil
}

// Set sets parameter p to v and marks it present.
func (c *Credentials) Set(p Param, v string) {
	if f := c.field(p); f != nil {
		*f = v
		c.Present |= p
	}
}

// Get returns parameter p and whether the field has it.
func (c *Credentials) Get(p Param) (string, bool) {
	if f := c.field(p); f != nil && c.Has(p) {
		return *f, true
	}
	return "", false
}

// Encode returns an Authorization field value that Parse reads back to
// the same parameters: "Digest" and every present parameter, each as a
// quoted string in which '"' and '\' are escaped.
func (c *Credentials) Encode() string {
	var b strings.Builder
	b.WriteString("Digest")
	sep := " "
	for _, pn := range paramNames {
		v, ok := c.Get(pn.p)
		if !ok {
			continue
		}
		b.WriteString(sep)
		sep = ", "
		b.WriteString(pn.name)
		b.WriteString(`="`)
		for i := 0; i < len(v); i++ {
			if v[i] == '"' || v[i] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(v[i])
		}
		b.WriteByte('"')
	}
	return b.String()
}

// Lengths of the parts of a nonce, as NONCE_TIME_LEN and NONCE_HASH_LEN:
// the base64 of an 8-byte time, then the hex of a SHA-1.
const (
	nonceTimeLen = 12
	nonceHashLen = 40
	nonceLen     = nonceTimeLen + nonceHashLen
	md5HexLen    = 32
)

// validNonce is VALID_NONCE: the length of a nonce this module makes, and
// the '=' that ends the base64 of an 8-byte time.
func validNonce(n string) bool {
	return len(n) == nonceLen && n[nonceTimeLen-1] == '='
}

// Parse parses the value of an Authorization field as parse_digest_header
// (get_digest_rec before 2.4.71) does:
//
//   - the value ends at its first NUL byte, as a C string does;
//   - the scheme is the text up to the first white space (ap_getword_white),
//     compared to "Digest" without regard to ASCII case; anything else is
//     NotDigest;
//   - then, repeatedly: white space is skipped, a key runs up to '=', ',',
//     white space or the end; after '=' and white space, a value is either
//     a quoted string, in which a backslash makes the next byte literal
//     and which ends at the next unescaped '"' or at the end of the field
//     (an unterminated string is accepted), or a token up to ',' or white
//     space; everything after the value up to the next ',' is ignored. A
//     key without '=' is present with an empty value;
//   - keys are compared without regard to ASCII case; unknown keys are
//     ignored; a key given twice keeps its last value;
//   - the field is Invalid unless it has username, realm, uri, a nonce of
//     exactly 52 bytes whose 12th is '=', and a response of exactly 32
//     bytes, and, if it has qop, cnonce and nc too. Apache answers an
//     Invalid field with 401 (AH01782), never 400.
//
// The returned Credentials are never nil: for NotDigest they hold only the
// scheme, for Invalid what was parsed.
func Parse(header string) (*Credentials, HeaderStatus) {
	line := cString(header)
	c := &Credentials{}

	i := 0
	for i < len(line) && !isSpace(line[i]) {
		i++
	}
	c.Scheme = line[:i]
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	if !equalFoldASCII(c.Scheme, "Digest") {
		return c, NotDigest
	}

	var value []byte
	for i < len(line) {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		k := i
		for i < len(line) && line[i] != '=' && line[i] != ',' && !isSpace(line[i]) {
			i++
		}
		key := line[k:i]
		for i < len(line) && isSpace(line[i]) {
			i++
		}

		value = value[:0]
		if i < len(line) && line[i] == '=' {
			i++
			for i < len(line) && isSpace(line[i]) {
				i++
			}
			if i < len(line) && line[i] == '"' {
				i++
				for i < len(line) && line[i] != '"' {
					if line[i] == '\\' && i+1 < len(line) {
						i++ // escaped byte
					}
					value = append(value, line[i])
					i++
				}
				if i < len(line) {
					i++ // the closing quote
				}
			} else {
				for i < len(line) && line[i] != ',' && !isSpace(line[i]) {
					value = append(value, line[i])
					i++
				}
			}
		}

		for i < len(line) && line[i] != ',' {
			i++
		}
		if i < len(line) {
			i++
		}

		for _, pn := range paramNames {
			if equalFoldASCII(key, pn.name) {
				c.Set(pn.p, string(value))
				break
			}
		}
	}

	if !c.Has(ParamUsername) || !c.Has(ParamRealm) || !c.Has(ParamURI) ||
		!c.Has(ParamNonce) || !validNonce(c.Nonce) ||
		!c.Has(ParamResponse) || len(c.Response) != md5HexLen ||
		(c.Has(ParamQOP) && (!c.Has(ParamCNonce) || !c.Has(ParamNC))) {
		return c, Invalid
	}

	if c.Has(ParamOpaque) {
		// As parse_digest_header: the whole opaque must be a hex
		// number (strtol base 16, so white space, a sign and 0x may
		// precede it) in 1..2^32-1; anything else leaves the client
		// number 0, which authentication refuses (AH01787).
		n, end, erange := strtol(c.Opaque, 16)
		if !erange && end == len(c.Opaque) && n > 0 && n <= 1<<32-1 {
			c.clientID = uint32(n)
		}
	}
	return c, Valid
}

// FieldValue returns the value of the Authorization field of h as httpd
// sees it, and whether there is one: httpd joins repeated fields with
// ", " (apr_table_compress with APR_OVERLAP_TABLES_MERGE) before
// mod_auth_digest reads it.
func FieldValue(h http.Header) (string, bool) {
	vs := h.Values("Authorization")
	if len(vs) == 0 {
		return "", false
	}
	return strings.Join(vs, ", "), true
}
