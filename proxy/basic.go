package proxy

import (
	"encoding/base64"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
)

// parseAuthorization reads an Authorization header as mod_auth_basic's
// get_basic_auth does: the scheme is the first word (case-insensitive),
// blanks are skipped, the rest is decoded leniently (APR's base64 decoder
// stops at the first character outside the alphabet), and the user name
// ends at the first ':'.
func parseAuthorization(h string, present bool) policy.Credentials {
	c := policy.Credentials{Present: present}
	if !present {
		return c
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return c
	}
	c.Basic = true
	rest = strings.TrimLeft(rest, " \t")
	n := 0
	for n < len(rest) && isB64(rest[n]) {
		n++
	}
	enc := rest[:n]
	if len(enc)%4 == 1 {
		enc = enc[:len(enc)-1]
	}
	dec, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(enc, "="))
	user, pass, _ := strings.Cut(string(dec), ":")
	c.User, c.Password = user, pass
	return c
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}
