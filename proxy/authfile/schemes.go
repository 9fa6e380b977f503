package authfile

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/tg123/go-htpasswd"
)

// systems are the hash formats of a password file, tried in order; the
// first that recognizes a hash decides. The last one rejects every hash,
// so that no hash is ever taken for a plaintext password (the
// htpasswd.DefaultSystems of go-htpasswd end in htpasswd.AcceptPlain,
// which does that).
//
// Each parser but acceptDES checks the syntax of a hash strictly before it
// hands the hash to go-htpasswd. httpd compares the whole output of
// crypt(3) or apr_password_validate with the whole hash, so a hash that
// isn't in the form those functions write can never match in httpd;
// go-htpasswd compares only the part after the salt, and panics on some
// malformed $5$ and $6$ hashes. The strict check rejects such hashes up
// front.
var systems = []htpasswd.PasswdParser{
	acceptMD5,
	acceptSHA1,
	acceptBcrypt,
	acceptSHACrypt,
	acceptDES,
	rejectUnknown,
}

// errMalformed returns the error for a hash that names a known scheme but
// is not in its form.
func errMalformed(scheme string) error {
	return fmt.Errorf("%w: malformed %s hash", ErrUnsupportedHash, scheme)
}

// acceptMD5 accepts the MD5 crypt of Apache ($apr1$) and of glibc ($1$):
// a salt of at most 8 characters other than '$', then '$' and 22
// characters of cryptAlphabet.
func acceptMD5(hash string) (htpasswd.EncodedPasswd, error) {
	var rest, scheme string
	if r, ok := strings.CutPrefix(hash, htpasswd.PrefixCryptApr1); ok {
		rest, scheme = r, "$apr1$ (Apache MD5)"
	} else if r, ok := strings.CutPrefix(hash, htpasswd.PrefixCryptMd5); ok {
		rest, scheme = r, "$1$ (MD5 crypt)"
	} else {
		return nil, nil
	}
	salt, sum, ok := strings.Cut(rest, "$")
	if !ok || len(salt) > 8 || len(sum) != 22 || !isCryptText(sum) {
		return nil, errMalformed(scheme)
	}
	return htpasswd.AcceptMd5(hash)
}

// acceptSHA1 accepts {SHA} and the base64 encoding of a SHA-1 sum, in
// canonical form.
func acceptSHA1(hash string) (htpasswd.EncodedPasswd, error) {
	b64, ok := strings.CutPrefix(hash, "{SHA}")
	if !ok {
		return nil, nil
	}
	sum, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(sum) != 20 || base64.StdEncoding.EncodeToString(sum) != b64 {
		return nil, errMalformed("{SHA}")
	}
	return htpasswd.AcceptSha(hash)
}

// acceptBcrypt accepts bcrypt hashes of the variants $2a$, $2b$ and $2y$:
// the variant, two digits of cost from 04 to 31, '$', and 53 characters
// (22 of salt, 31 of hash).
//
// golang.org/x/crypto/bcrypt computes all three variants as $2b$. So does
// the crypt_blowfish of httpd, except for $2a$ hashes of the rare
// passwords that trip its countermeasure against the sign extension bug of
// old crypt_blowfish (such as "\xff\xff\xa3"): those never match here.
func acceptBcrypt(hash string) (htpasswd.EncodedPasswd, error) {
	if len(hash) < 4 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' {
		return nil, nil
	}
	switch hash[2] {
	case 'a', 'b', 'y':
	default:
		return nil, nil // left to rejectUnknown
	}
	if len(hash) != 60 || hash[6] != '$' || !isCryptText(hash[7:]) ||
		hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9' {
		return nil, errMalformed("bcrypt")
	}
	if cost := int(hash[4]-'0')*10 + int(hash[5]-'0'); cost < 4 || cost > 31 {
		return nil, errMalformed("bcrypt")
	}
	return htpasswd.AcceptBcrypt(hash)
}

// acceptSHACrypt accepts the SHA-256 ($5$) and SHA-512 ($6$) crypt of
// glibc: optionally "rounds=N$" with N from 1000 to 999999999 written
// without leading zeros, a salt of at most 16 characters other than '$',
// then '$' and 43 or 86 characters of cryptAlphabet.
func acceptSHACrypt(hash string) (htpasswd.EncodedPasswd, error) {
	var rest, scheme string
	var sumLen int
	if r, ok := strings.CutPrefix(hash, htpasswd.PrefixCryptSha256); ok {
		rest, scheme, sumLen = r, "$5$ (SHA-256 crypt)", 43
	} else if r, ok := strings.CutPrefix(hash, htpasswd.PrefixCryptSha512); ok {
		rest, scheme, sumLen = r, "$6$ (SHA-512 crypt)", 86
	} else {
		return nil, nil
	}
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		n, after, ok := strings.Cut(r, "$")
		if !ok || !validRounds(n) {
			return nil, errMalformed(scheme)
		}
		rest = after
	}
	salt, sum, ok := strings.Cut(rest, "$")
	if !ok || len(salt) > 16 || len(sum) != sumLen || !isCryptText(sum) {
		return nil, errMalformed(scheme)
	}
	return htpasswd.AcceptCryptSha(hash)
}

// validRounds reports whether n is a rounds count that crypt(3) writes
// back unchanged.
func validRounds(n string) bool {
	if len(n) < 4 || len(n) > 9 || n[0] == '0' {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// unsupportedSchemes names the crypt(3) schemes of libxcrypt, and others,
// that httpd does not accept or this package does not support, by the
// prefix of their hashes.
var unsupportedSchemes = []struct{ prefix, name string }{
	{"{SSHA}", "{SSHA}, which Apache httpd does not accept"},
	{"$2x$", "bcrypt $2x$"},
	{"$2$", "bcrypt $2$"},
	{"$y$", "yescrypt ($y$)"},
	{"$gy$", "gost-yescrypt ($gy$)"},
	{"$7$", "scrypt ($7$)"},
	{"$sha1$", "SHA-1 crypt ($sha1$)"},
	{"$md5", "Sun MD5 crypt ($md5)"},
	{"$3$", "NT hash ($3$)"},
}

// rejectUnknown rejects every hash; it ends systems. Its error never
// quotes the hash, which may be a plaintext password.
func rejectUnknown(hash string) (htpasswd.EncodedPasswd, error) {
	if hash == "" {
		return nil, fmt.Errorf("%w: empty", ErrUnsupportedHash)
	}
	for _, s := range unsupportedSchemes {
		if strings.HasPrefix(hash, s.prefix) {
			return nil, fmt.Errorf("%w: %s", ErrUnsupportedHash, s.name)
		}
	}
	if len(hash) == 20 && hash[0] == '_' && isCryptText(hash[1:]) {
		return nil, fmt.Errorf("%w: BSDi extended DES crypt", ErrUnsupportedHash)
	}
	return nil, fmt.Errorf("%w: unknown format (plaintext is never accepted)", ErrUnsupportedHash)
}

// parseHash returns the matcher of hash, or an error wrapping
// ErrUnsupportedHash.
func parseHash(hash string) (htpasswd.EncodedPasswd, error) {
	for _, accept := range systems {
		m, err := accept(hash)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedHash) {
				// An error of go-htpasswd: it may quote the hash.
				err = fmt.Errorf("%w: malformed", ErrUnsupportedHash)
			}
			return nil, err
		}
		if m != nil {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown format", ErrUnsupportedHash) // not reached
}
