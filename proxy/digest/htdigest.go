package digest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// A Lookup finds the H(A1) of user in realm, as the get_realm_hash of an
// authentication provider: found is false if the provider does not know
// the user (the next provider is asked), and err is set if the provider
// failed. An err that is ErrDenied refuses the user (AUTH_DENIED); any
// other err makes Apache answer 500 (AUTH_GENERAL_ERROR). The realm is
// the quoted AuthName (ap_auth_name).
//
// The H(A1) is used exactly as returned: Apache does not check that it
// is 32 lowercase hex digits, and one that is not never matches.
type Lookup func(user, realm string) (ha1 string, found bool, err error)

// ErrDenied is the error a Lookup returns to refuse a user before the
// password is checked (AUTH_DENIED: 401, AH01791).
var ErrDenied = errors.New("digest: user denied by provider")

// A ProviderError is a Lookup failure with the code Apache logs for it,
// such as AH01622 for a password file that cannot be opened.
type ProviderError struct {
	Code string
	Err  error
}

func (e *ProviderError) Error() string { return e.Code + ": " + e.Err.Error() }
func (e *ProviderError) Unwrap() error { return e.Err }

// ErrNoProvider is the error of Providers with no provider: Apache's
// "No Authn provider configured" (AH01770, 500).
var ErrNoProvider = &ProviderError{Code: "AH01770", Err: errors.New("No Authn provider configured")}

// Providers returns a Lookup that asks each of ls in order, as get_hash
// walks the AuthDigestProvider list: the first that finds the user, or
// fails, decides; a provider that does not know the user passes to the
// next one.
func Providers(ls ...Lookup) Lookup {
	return func(user, realm string) (string, bool, error) {
		if len(ls) == 0 {
			return "", false, ErrNoProvider
		}
		for _, l := range ls {
			ha1, found, err := l(user, realm)
			if err != nil || found {
				return ha1, found, err
			}
		}
		return "", false, nil
	}
}

// maxStringLen is MAX_STRING_LEN, the line buffer of get_realm_hash.
const maxStringLen = 8192

// HTDigestFile returns the Lookup of mod_authn_file for a password file
// written by htdigest (AuthUserFile with AuthDigestProvider file): it
// reads the file on every call, as httpd does, and answers as
// LookupHTDigest. A path of "" is an AuthUserFile that is not set
// (AH01621); a file that cannot be opened or is not a regular file (other
// than /dev/null) fails with AH01622. Either makes Apache answer 500.
func HTDigestFile(path string) Lookup {
	return func(user, realm string) (string, bool, error) {
		if path == "" {
			return "", false, &ProviderError{Code: "AH01621", Err: errors.New("AuthUserFile not specified in the configuration")}
		}
		f, err := os.Open(path)
		if err != nil {
			return "", false, &ProviderError{Code: "AH01622", Err: fmt.Errorf("Could not open password file: %s: %w", path, err)}
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return "", false, &ProviderError{Code: "AH01622", Err: fmt.Errorf("Could not open password file: %s: %w", path, err)}
		}
		if !fi.Mode().IsRegular() && path != "/dev/null" {
			return "", false, &ProviderError{Code: "AH01622", Err: fmt.Errorf("Could not open password file: %s: not a regular file", path)}
		}
		ha1, found := LookupHTDigest(f, user, realm)
		return ha1, found, nil
	}
}

// LookupHTDigest scans an htdigest file ("user:realm:ha1" lines) for user
// in realm as get_realm_hash of mod_authn_file does:
//
//   - lines are read as ap_cfg_getline of httpd 2.4 reads them into its
//     8192-byte buffer (see cfgReader); a line that does not fit ends the
//     scan, as does a read error, so users after it are not found;
//   - blank lines and lines starting with '#' are skipped;
//   - the user is the text up to the first ':', the realm the text after
//     the run of ':' that follows, up to the next ':' (ap_getword skips a
//     run of separators, so "user::realm:hash" names realm "realm"), and
//     the H(A1) the text after the next run of ':' up to the following
//     ':' or the end, possibly empty;
//   - the first line whose user and realm both equal the ones asked for
//     (case-sensitively) decides; later lines for them are ignored.
func LookupHTDigest(r io.Reader, user, realm string) (ha1 string, found bool) {
	cr := cfgReader{r: bufio.NewReader(r)}
	for {
		line, ok := cr.next()
		if !ok {
			return "", false
		}
		if line == "" || line[0] == '#' {
			continue
		}
		w, rest := getword(line, ':')
		x, rest := getword(rest, ':')
		if w == user && x == realm {
			h, _ := getword(rest, ':')
			return h, true
		}
	}
}

// getword returns s up to the first stop byte, and what follows the run
// of stop bytes after it, as ap_getword does.
func getword(s string, stop byte) (word, rest string) {
	i := strings.IndexByte(s, stop)
	if i < 0 {
		return s, ""
	}
	rest = s[i:]
	for rest != "" && rest[0] == stop {
		rest = rest[1:]
	}
	return s[:i], rest
}

// cfgReader reads lines as ap_cfg_getline of httpd 2.4 does for a file
// opened with ap_pcfg_openfile, into a buffer of MAX_STRING_LEN bytes:
//
//   - each read (apr_file_gets) takes at most the room left in the buffer
//     less one byte, up to and including a '\n';
//   - the content read ends at its first NUL, as a C string does;
//   - a read that ends in '\n' is a line; if the '\n' (or "\r\n") follows
//     a backslash, the backslash and line break are removed and the next
//     read continues the line (so "\\\n" joins too);
//   - a read that does not end in '\n' and fills the buffer is an error
//     (APR_ENOSPC), which ends the scan; otherwise it is the last line;
//   - the end of the file ends a continued line as it is;
//   - leading and trailing white space is removed (cfg_trim_line).
type cfgReader struct {
	r    *bufio.Reader
	done bool
	buf  []byte
}

// gets reads as apr_file_gets(buf, size): at most size-1 bytes, stopping
// after a '\n'. It returns nil at the end of the file (or on an error)
// when nothing was read.
func (c *cfgReader) gets(size int) []byte {
	var out []byte
	for len(out) < size-1 {
		b, err := c.r.ReadByte()
		if err != nil {
			break
		}
		out = append(out, b)
		if b == '\n' {
			break
		}
	}
	return out
}

// next returns the next line; ok is false at the end of the file or on
// an error that ends the scan.
func (c *cfgReader) next() (line string, ok bool) {
	if c.done {
		return "", false
	}
	buf := c.buf[:0]
	cbuf := 0 // where the next read goes
	for {
		chunk := c.gets(maxStringLen - cbuf)
		if chunk == nil {
			if cbuf != 0 {
				buf = buf[:cbuf]
				break
			}
			c.done = true
			return "", false
		}
		if i := indexByte(chunk, 0); i >= 0 {
			chunk = chunk[:i]
		}
		buf = append(buf[:cbuf], chunk...)
		cp := len(buf)
		if cp > 0 && buf[cp-1] == '\n' {
			cp--
			if cp > 0 && buf[cp-1] == '\r' {
				cp--
			}
			if cp > 0 && buf[cp-1] == '\\' {
				cp--
				cbuf = cp // continued: the next read replaces the backslash
				continue
			}
		} else if cp >= maxStringLen-1 {
			c.done = true // APR_ENOSPC
			return "", false
		}
		break
	}
	c.buf = buf
	return strings.Trim(string(buf), " \t\n\v\f\r"), true
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
