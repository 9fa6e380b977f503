package authfile

import (
	"errors"
	"fmt"
	"strings"
)

// Errors wrapped by a LineError, to be tested for with errors.Is.
var (
	// ErrNoColon marks a line that has no ':' between its name and the
	// rest.
	ErrNoColon = errors.New("no colon")
	// ErrUnsupportedHash marks a password line whose hash is in no
	// supported format, or is malformed, so that it can never match.
	ErrUnsupportedHash = errors.New("unsupported password hash")
	// ErrDuplicateUser marks a password line for a user named on an
	// earlier line; it is ignored.
	ErrDuplicateUser = errors.New("duplicate user")
	// ErrContinuedAtEOF marks a last line that ends in a backslash,
	// which asks for a continuation that never comes. Apache httpd 2.2
	// drops such a line, and so does this package.
	ErrContinuedAtEOF = errors.New("line continued past end of file")
	// ErrUnterminatedQuote marks a group line with a quoted member name
	// whose closing quote is missing. As in httpd, the name runs to the
	// end of the line.
	ErrUnterminatedQuote = errors.New("unterminated quote")
)

// A LineError describes a problem with one line of a password or group
// file. Its message has the form "file:line: message". Hashes are never
// part of the message.
type LineError struct {
	File string // the name passed to ParseUsers or ParseGroups
	Line int    // 1-based; the first line of a continued line
	Err  error  // wraps one of the Err* values of this package
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

func lineError(file string, line int, format string, args ...any) *LineError {
	return &LineError{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}

// isSpace reports whether c is white space to C's isspace in the "C"
// locale, which is what apr_isspace is.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

const cSpace = " \t\n\v\f\r"

// A lineReader splits a file into logical lines as ap_cfg_getline of
// Apache httpd 2.2 does (server/util.c) for a file opened with
// ap_pcfg_openfile:
//
//   - a physical line ends at '\n'; as C strings do, it ends at its first
//     NUL byte too;
//   - a line ending in a single backslash (before its "\n" or "\r\n") is
//     joined to the next line, without the backslash and the line break;
//     a line ending in two backslashes loses one of them and is not
//     joined (httpd 2.4 joins it; files rarely tell the two apart);
//   - a continued line that reaches the end of the file is dropped, as
//     2.2 drops it;
//   - leading and trailing white space is removed.
//
// httpd 2.2 also splits lines longer than 8191 bytes; lineReader doesn't.
type lineReader struct {
	s    string
	pos  int
	line int // number of the last physical line read

	// danglingLine is the first line of a continued line that reached
	// the end of the file, or 0.
	danglingLine int
}

// next returns the next logical line and the number of its first physical
// line. ok is false at the end of the file.
func (r *lineReader) next() (text string, lineno int, ok bool) {
	var joined []byte // used only for continued lines
	lineno = r.line + 1
	for {
		if r.pos >= len(r.s) {
			if joined != nil {
				r.danglingLine = lineno
			}
			return "", 0, false
		}
		phys := r.s[r.pos:]
		if i := strings.IndexByte(phys, '\n'); i >= 0 {
			phys = phys[:i+1]
		}
		r.pos += len(phys)
		r.line++
		if i := strings.IndexByte(phys, 0); i >= 0 {
			phys = phys[:i] // and so no line break: no continuation
		}

		cont := false
		if body, ok := strings.CutSuffix(phys, "\n"); ok {
			body = strings.TrimSuffix(body, "\r")
			if b, ok := strings.CutSuffix(body, `\`); ok {
				if strings.HasSuffix(b, `\`) {
					phys = b // escaped backslash: drop one, don't join
				} else {
					phys, cont = b, true
				}
			}
		}
		if cont {
			joined = append(joined, phys...)
			continue
		}
		if joined != nil {
			joined = append(joined, phys...)
			phys = string(joined)
		}
		return strings.Trim(phys, cSpace), lineno, true
	}
}

// getword returns the text of s up to the first stop byte and the text
// after the run of stop bytes that follows it, as ap_getword does.
func getword(s string, stop byte) (word, rest string, found bool) {
	i := strings.IndexByte(s, stop)
	if i < 0 {
		return s, "", false
	}
	rest = s[i:]
	for rest != "" && rest[0] == stop {
		rest = rest[1:]
	}
	return s[:i], rest, true
}

// getwordConf returns the first word of s and the text after the white
// space that follows it, as ap_getword_conf does: a word is either a run
// of non-space bytes or a string in double or single quotes (in which a
// backslash escapes the quote), and in either form a doubled backslash
// stands for one. unterminated reports a missing closing quote, in which
// case the word runs to the end of s. At the end of s, getwordConf returns
// "" and "".
func getwordConf(s string) (word, rest string, unterminated bool) {
	s = strings.TrimLeft(s, cSpace)
	if s == "" {
		return "", "", false
	}
	var raw string
	var quote byte
	end := 0
	if q := s[0]; q == '"' || q == '\'' {
		quote = q
		j := 1
		for j < len(s) && s[j] != q {
			if s[j] == '\\' && j+1 < len(s) && (s[j+1] == q || s[j+1] == '\\') {
				j += 2
			} else {
				j++
			}
		}
		raw = s[1:j]
		if j < len(s) {
			j++ // the closing quote
		} else {
			unterminated = true
		}
		end = j
	} else {
		for end < len(s) && !isSpace(s[end]) {
			end++
		}
		raw = s[:end]
	}
	return unescapeConf(raw, quote), strings.TrimLeft(s[end:], cSpace), unterminated
}

// unescapeConf undoes the escapes of a word of getwordConf, as
// substring_conf of httpd does.
func unescapeConf(raw string, quote byte) string {
	if strings.IndexByte(raw, '\\') < 0 {
		return raw
	}
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) && (raw[i+1] == '\\' || (quote != 0 && raw[i+1] == quote)) {
			i++
			c = raw[i]
		}
		b = append(b, c)
	}
	return string(b)
}
