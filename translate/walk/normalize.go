package walk

import "strings"

// NormalizePath turns the path of a request-target (without its query)
// into r->uri as Apache 2.4 does (ap_process_request_internal:
// ap_normalize_path, then ap_unescape_url_ex; apache-access-semantics.md
// §5). It returns 0 and the URI, or the status Apache answers: 400 for a
// malformed escape or a path that climbs above the root, 404 for an
// encoded slash (when not allowed) or NUL.
func NormalizePath(raw string, mergeSlashes bool, encodedSlashes uint8) (string, int) {
	if raw == "*" {
		return raw, 0
	}
	p, ok := normalize([]byte(raw), mergeSlashes, true)
	if !ok {
		return "", 400
	}
	const (
		off      = 0
		on       = 1
		nodecode = 2
	)
	u, st := unescape(p, encodedSlashes == off, encodedSlashes == nodecode, true)
	if st != 0 {
		return "", st
	}
	if encodedSlashes == on {
		u, _ = normalize(u, mergeSlashes, false)
	}
	return string(u), 0
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// normalize is ap_normalize_path with AP_NORMALIZE_NOT_ABOVE_ROOT (and
// AP_NORMALIZE_DECODE_UNRESERVED when decode is set), on a copy.
func normalize(path []byte, merge, decode bool) ([]byte, bool) {
	if len(path) == 0 || path[0] != '/' {
		return nil, false
	}
	p := append([]byte(nil), path...)
	p = append(p, 0) // NUL terminator, as the C code reads one past the end
	ok := true
	l, w := 1, 1
	at := func(i int) byte {
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	slashOrNul := func(c byte) bool { return c == '/' || c == 0 }
	for p[l] != 0 {
		if decode && p[l] == '%' {
			if isHex(at(l+1)) && isHex(at(l+2)) {
				c := unhex(p[l+1])<<4 | unhex(p[l+2])
				if isUnreserved(c) {
					l += 2
					p[l] = c
				}
			} else {
				ok = false
			}
		}
		if w == 0 || p[w-1] == '/' {
			if merge && p[l] == '/' {
				for p[l] == '/' {
					l++
				}
				continue
			}
			if p[l] == '.' {
				if slashOrNul(at(l + 1)) {
					l++
					if p[l] != 0 {
						l++
					}
					continue
				}
				n := l + 1
				isDotDot := false
				if at(n) == '.' {
					isDotDot = slashOrNul(at(n + 1))
				} else if decode && at(n) == '%' && at(n+1) == '2' && (at(n+2) == 'e' || at(n+2) == 'E') {
					n += 2
					isDotDot = slashOrNul(at(n + 1))
				}
				if isDotDot {
					if w > 1 {
						for {
							w--
							if w == 0 || p[w-1] == '/' {
								break
							}
						}
					} else {
						ok = false
					}
					l = n + 1
					if p[l] != 0 {
						l++
					}
					continue
				}
			}
		}
		p[w] = p[l]
		w++
		l++
	}
	return p[:w], ok
}

// unescape is unescape_url: with AP_UNESCAPE_URL_KEEP_UNRESERVED when
// keepUnreserved (2.4), plus FORBID_SLASHES (forbid) or KEEP_SLASHES
// (keep).
func unescape(p []byte, forbid, keep, keepUnreserved bool) ([]byte, int) {
	if strings.IndexByte(string(p), '%') < 0 {
		return p, 0
	}
	out := make([]byte, 0, len(p))
	badesc, badpath := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
			badesc = true
			out = append(out, '%')
			continue
		}
		d := unhex(p[i+1])<<4 | unhex(p[i+2])
		switch {
		case d == 0 || forbid && d == '/':
			badpath = true
			out = append(out, d)
			i += 2
		case keepUnreserved && isUnreserved(d) || keep && d == '/':
			out = append(out, p[i], p[i+1], p[i+2])
			i += 2
		default:
			out = append(out, d)
			i += 2
		}
	}
	if badesc {
		return nil, 400
	}
	if badpath {
		return nil, 404
	}
	return out, 0
}

// no2slash collapses runs of "/" (ap_no2slash).
func no2slash(s string) string {
	if !strings.Contains(s, "//") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == '/' {
			for i+1 < len(s) && s[i+1] == '/' {
				i++
			}
		}
	}
	return b.String()
}

// NormalizePath22 is Apache 2.2's path handling (ap_process_request_internal
// 2.2.34): everything is decoded (%2F is 404 unless AllowEncodedSlashes,
// which keeps it encoded; %00 is 404; a bad escape 400), then
// ap_getparents removes "." and ".." segments. "//" stays. A path that
// climbs above the root loses its leading slash and is refused (400,
// "Invalid URI in request").
func NormalizePath22(raw string, allowEncodedSlashes bool) (string, int) {
	if raw == "*" {
		return raw, 0
	}
	u, st := unescape([]byte(raw), !allowEncodedSlashes, allowEncodedSlashes, false)
	if st != 0 {
		return "", st
	}
	out := getparents(string(u))
	if !strings.HasPrefix(out, "/") {
		return "", 400
	}
	return out, 0
}

// getparents is ap_getparents (server/util.c, RFC 1808 steps a-d).
func getparents(s string) string {
	name := []byte(s)
	slash := func(c byte) bool { return c == '/' }
	at := func(i int) byte {
		if i >= 0 && i < len(name) {
			return name[i]
		}
		return 0
	}
	firstDot := strings.IndexByte(s, '.')
	if firstDot < 0 {
		return s
	}
	// a) remove ./ segments
	l, w := firstDot, firstDot
	for l < len(name) {
		if name[l] == '.' && slash(at(l+1)) && (l == 0 || slash(name[l-1])) {
			l += 2
		} else {
			name[w] = name[l]
			w++
			l++
		}
	}
	name = name[:w]
	// b) remove a trailing "." segment
	if w == 1 && name[0] == '.' {
		name = name[:0]
	} else if w > 1 && name[w-1] == '.' && slash(name[w-2]) {
		name = name[:w-1]
	}
	// c) remove every xx/../ segment, a leading ../ and /../ included
	l = firstDot
	for l < len(name) {
		if name[l] == '.' && at(l+1) == '.' && slash(at(l+2)) && (l == 0 || slash(name[l-1])) {
			m := l + 3
			l -= 2
			if l >= 0 {
				for l >= 0 && !slash(name[l]) {
					l--
				}
				l++
			} else {
				l = 0
			}
			name = append(name[:l], name[m:]...)
		} else {
			l++
		}
	}
	// d) remove a trailing xx/.. segment
	n := len(name)
	if n == 2 && name[0] == '.' && name[1] == '.' {
		name = name[:0]
	} else if n > 2 && name[n-1] == '.' && name[n-2] == '.' && slash(name[n-3]) {
		l = n - 4
		if l >= 0 {
			for l >= 0 && !slash(name[l]) {
				l--
			}
			l++
		} else {
			l = 0
		}
		name = name[:l]
	}
	return string(name)
}
