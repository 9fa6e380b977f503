package digest

import (
	"crypto/md5"
	"encoding/hex"
)

// md5Hex is ap_md5: the lowercase hex MD5 of s.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// HA1 returns H(A1) for algorithm MD5 (RFC 2617 3.2.2.2): the hex MD5 of
// "user:realm:password", what htdigest stores after "user:realm:".
func HA1(user, realm, password string) string {
	return md5Hex(user + ":" + realm + ":" + password)
}

// SessionHA1 returns H(A1) for algorithm MD5-sess (RFC 2617 3.2.2.2) from
// the MD5 H(A1) of the user: the hex MD5 of "ha1:nonce:cnonce". Apache
// 2.4 does not implement MD5-sess (AuthDigestAlgorithm MD5-sess is a
// configuration error, and a client's algorithm=MD5-sess is refused with
// AH01789), so Authenticate never uses it; it is here for clients and
// tests.
func SessionHA1(ha1, nonce, cnonce string) string {
	return md5Hex(ha1 + ":" + nonce + ":" + cnonce)
}

// HA2 returns H(A2) for qop "auth" or no qop (RFC 2617 3.2.2.3): the hex
// MD5 of "method:uri", with the uri parameter as the client sent it.
func HA2(method, uri string) string {
	return md5Hex(method + ":" + uri)
}

// ResponseDigest returns the request-digest (RFC 2617 3.2.2.1) from the
// H(A1) to use (HA1, or SessionHA1 for MD5-sess): with a qop, the hex MD5
// of "ha1:nonce:nc:cnonce:qop:H(A2)" (as new_digest); without one
// (qop == ""), the RFC 2069 form "ha1:nonce:H(A2)", which Apache 2.4.71 no
// longer accepts (AH10560).
func ResponseDigest(ha1, nonce, nc, cnonce, qop, method, uri string) string {
	if qop == "" {
		return md5Hex(ha1 + ":" + nonce + ":" + HA2(method, uri))
	}
	return md5Hex(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + HA2(method, uri))
}

// rspauth is the rspauth of Authentication-Info (RFC 2617 3.2.3), as
// add_auth_info computes it: like the request-digest, with an empty
// method in A2.
func rspauth(ha1, nonce, nc, cnonce, qop, uri string) string {
	return md5Hex(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + md5Hex(":"+uri))
}
