package ldapauth

import "strings"

// getwordConf is httpd's ap_getword_conf (server/util.c): the next word
// of s, a quoted one unquoted with \\ and \<quote> undone, and the rest
// of s after the white space that follows it; "" at the end.
func getwordConf(s string) (word, rest string) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	s = s[i:]
	if s == "" {
		return "", ""
	}
	var end int
	var q byte
	if s[0] == '"' || s[0] == '\'' {
		q = s[0]
		end = 1
		for end < len(s) && s[end] != q {
			if s[end] == '\\' && end+1 < len(s) && (s[end+1] == q || s[end+1] == '\\') {
				end += 2
			} else {
				end++
			}
		}
		word = substringConf(s[1:end], q)
		if end < len(s) {
			end++
		}
	} else {
		for end < len(s) && !isCSpace(s[end]) {
			end++
		}
		word = substringConf(s[:end], 0)
	}
	for end < len(s) && isCSpace(s[end]) {
		end++
	}
	return word, s[end:]
}

// substringConf is httpd's substring_conf.
func substringConf(s string, q byte) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || (q != 0 && s[i+1] == q)) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

// getword is ap_getword(p, &s, stop): up to the first stop byte, and the
// rest after any run of stop bytes.
func getword(s string, stop byte) (word, rest string) {
	i := strings.IndexByte(s, stop)
	if i < 0 {
		return s, ""
	}
	word = s[:i]
	for i < len(s) && s[i] == stop {
		i++
	}
	return word, s[i:]
}

// getwordWhite is ap_getword_white.
func getwordWhite(s string) (word, rest string) {
	i := 0
	for i < len(s) && !isCSpace(s[i]) {
		i++
	}
	word = s[:i]
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	return word, s[i:]
}

// cstring is s up to its first NUL, as a C string.
func cstring(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}
