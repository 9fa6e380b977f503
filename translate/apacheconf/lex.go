package apacheconf

import (
	"slices"
	"strings"
)

// isSpace reports whether c is white space in the C locale, as httpd's
// apr_isspace does. Unlike strings.TrimSpace it knows nothing of Unicode.
// Most bytes of a configuration are above ' ': one comparison tells them.
func isSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || '\t' <= c && c <= '\r')
}

// trimLeft returns s without leading white space.
func trimLeft(s string) string {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return s[i:]
}

// trimRight returns s without trailing white space.
func trimRight(s string) string {
	i := len(s)
	for i > 0 && isSpace(s[i-1]) {
		i--
	}
	return s[:i]
}

// getWord splits the first word off s as httpd's ap_getword_conf does and
// returns it unquoted and unescaped, together with the rest of s with its
// leading white space removed. It returns "", "" when s is blank. A word
// with nothing to unescape is a slice of s.
func getWord(s string) (word, rest string) {
	s = trimLeft(s)
	if s == "" {
		return "", ""
	}
	var end int
	escaped := false // a backslash that unescape may take away
	if q := s[0]; q == '"' || q == '\'' {
		end = 1
		for end < len(s) && s[end] != q {
			if s[end] == '\\' && end+1 < len(s) && (s[end+1] == q || s[end+1] == '\\') {
				end += 2
				escaped = true
			} else {
				end++
			}
		}
		// unescape pairs the backslashes as this loop does: without
		// such a pair, it would give the text back.
		word = s[1:end]
		if escaped {
			word = unescape(word, q)
		}
		if end < len(s) {
			end++ // the closing quote
		}
	} else {
		for ; end < len(s); end++ {
			c := s[end]
			if isSpace(c) {
				break
			}
			if c == '\\' {
				escaped = true
			}
		}
		word = s[:end]
		if escaped {
			word = unescape(word, 0)
		}
	}
	return word, trimLeft(s[end:])
}

// unescape undoes the escapes of a word, as httpd's substring_conf: `\\`
// becomes `\`, and within a quoted word a backslash before the quote
// character q becomes the quote. Other backslashes are kept.
func unescape(s string, q byte) string {
	i := 0
	for i < len(s) && s[i] != '\\' {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || (q != 0 && s[i+1] == q)) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

// words splits s into words with getWord.
func words(s string) []string {
	return appendWords(nil, s)
}

// appendWords appends the words of s to ws. s has at most (len(s)+1)/2
// words, every word but the last taking two bytes at least (a quoted one
// its quotes, another the blank after it): where ws has room for as many,
// the words are appended without being counted first; elsewhere ws is
// grown to hold as many words as s has runs of non-blanks (which a quote
// after a quoted word exceeds: append then grows it again).
func appendWords(ws []string, s string) []string {
	s = trimLeft(s)
	if cap(ws)-len(ws) < (len(s)+1)/2 {
		// As many words as s has runs of non-blanks (quotes may join
		// some).
		n := 0
		for i := 0; i < len(s); i++ {
			if !isSpace(s[i]) && (i == 0 || isSpace(s[i-1])) {
				n++
			}
		}
		ws = slices.Grow(ws, n)
	}
	for s != "" {
		var w string
		w, s = getWord(s)
		ws = append(ws, w)
	}
	return ws
}

// A segment records where a physical line's text starts in a logical line.
type segment struct {
	off       int // offset in the logical line
	line, col int // position in the file, 1-based
}

// A lineReader splits a file into logical lines, joining continuation lines
// as httpd's ap_cfg_getline does, and maps offsets in a logical line back to
// file positions.
type lineReader struct {
	src  string // the file, converted once: most lines are slices of it
	off  int    // next unread byte of src
	line int    // physical lines read so far
	buf  []byte
	segs []segment
}

// newLineReader reads src, whose first line is line lines+1 of its file.
func newLineReader(src string, lines int) *lineReader {
	r := &lineReader{src: src, line: lines}
	if strings.HasPrefix(src, "\xEF\xBB\xBF") {
		r.off = 3
	}
	return r
}

// next returns the next logical line, untrimmed.
func (r *lineReader) next() (string, bool) {
	if r.off >= len(r.src) {
		return "", false
	}
	r.buf, r.segs = r.buf[:0], r.segs[:0]
	// A line that does not continue is a slice of the file.
	if nl := strings.IndexByte(r.src[r.off:], '\n'); nl >= 0 {
		l := r.src[r.off : r.off+nl+1]
		p := len(l) - 1
		if p > 0 && l[p-1] == '\r' {
			p--
		}
		if p == 0 || l[p-1] != '\\' {
			r.line++
			r.segs = append(r.segs, segment{off: 0, line: r.line, col: 1})
			r.off += nl + 1
			return l, true
		}
	} else {
		r.line++
		r.segs = append(r.segs, segment{off: 0, line: r.line, col: 1})
		l := r.src[r.off:]
		r.off = len(r.src)
		return l, true
	}
	for r.off < len(r.src) {
		r.line++
		// Columns count bytes; a byte order mark is not counted.
		r.segs = append(r.segs, segment{off: len(r.buf), line: r.line, col: 1})
		rest := r.src[r.off:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			r.buf = append(r.buf, rest...)
			r.off = len(r.src)
			break
		}
		r.buf = append(r.buf, rest[:nl+1]...)
		r.off += nl + 1
		// Continuation: a backslash right before "\n" or "\r\n". Like
		// httpd, look at the logical line so far, so that an empty line
		// after `\\` continues too.
		p := len(r.buf) - 1
		if p > 0 && r.buf[p-1] == '\r' {
			p--
		}
		if p > 0 && r.buf[p-1] == '\\' {
			r.truncate(p - 1)
			continue
		}
		break
	}
	return string(r.buf), true
}

// truncate cuts the logical line to n bytes, forgetting segments that start
// after the cut.
func (r *lineReader) truncate(n int) {
	r.buf = r.buf[:n]
	for len(r.segs) > 0 && r.segs[len(r.segs)-1].off > n {
		r.segs = r.segs[:len(r.segs)-1]
	}
}

// pos returns the line and column of the byte at offset off of the current
// logical line.
func (r *lineReader) pos(off int) (line, col int) {
	s := r.segs[0]
	for _, t := range r.segs[1:] {
		if t.off > off {
			break
		}
		s = t
	}
	return s.line, s.col + off - s.off
}
