package digest

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
)

// SecretLen is the length of the server secret (SECRET_LEN).
const SecretLen = 20

// nonceTimeString is the time part of a nonce: the base64 (with padding)
// of the 8 bytes of an apr_time_t in the byte order of the machine httpd
// runs on (little-endian on the amd64 and arm64 Linux builds), 12
// characters ending in '='.
func nonceTimeString(t int64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(t))
	return base64.StdEncoding.EncodeToString(b[:])
}

// nonceHash is gen_nonce_hash: the hex SHA-1 of the secret, the realm
// (ap_auth_name, quoted), the time part of the nonce and the opaque, if
// any, exactly as the client sends it back.
func (s *Server) nonceHash(timeStr, opaque, realm string) string {
	h := sha1.New()
	h.Write(s.secret[:])
	h.Write([]byte(cString(realm)))
	h.Write([]byte(timeStr))
	h.Write([]byte(cString(opaque)))
	return hex.EncodeToString(h.Sum(nil))
}

// genNonce is gen_nonce: the time part, then the hash. The time is the
// request time, or, for one-time nonces (lifetime 0), the next value of a
// counter, so that one-time nonces are ordered by issue.
func (s *Server) genNonce(cfg *Config, now int64, opaque, realm string) string {
	t := now
	if cfg.lifetimeUsec() == 0 {
		t = int64(s.otn.Add(1)) // apr_atomic_inc32(otn_counter) + 1
	}
	ts := nonceTimeString(t)
	return ts + s.nonceHash(ts, opaque, realm)
}

// verifyNonce checks the hash part of a nonce (of the length validNonce
// checks) in constant time, as check_nonce (ap_memeq_timingsafe), and
// returns the time part decoded. The time means something only when the
// hash matches.
func (s *Server) verifyNonce(nonce, opaque, realm string) (t int64, expected string, ok bool) {
	ts := nonce[:nonceTimeLen]
	expected = s.nonceHash(ts, opaque, realm)
	ok = subtle.ConstantTimeCompare([]byte(expected), []byte(nonce[nonceTimeLen:])) == 1
	var b [9]byte // DecodedLen(12)
	// A nonce whose hash matches was made by genNonce, so its time part
	// is the base64 of 8 bytes.
	if n, err := base64.StdEncoding.Decode(b[:], []byte(ts)); err == nil && n == 8 {
		t = int64(binary.LittleEndian.Uint64(b[:8]))
	}
	return t, expected, ok
}
