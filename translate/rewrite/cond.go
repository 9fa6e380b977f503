package rewrite

import (
	"errors"
	"strings"
)

// FileKind is what a path is on the file system, for a condition's file
// tests.
type FileKind uint8

// The kinds apr_stat reports that the tests look at.
const (
	FileNone    FileKind = iota // no such file, or it cannot be read
	FileRegular                 // APR_REG
	FileDir                     // APR_DIR
	FileLink                    // APR_LNK (asked for without following links)
	FileOther
)

// FileInfo is a path's apr_stat, as far as the tests read it.
type FileInfo struct {
	Kind FileKind
	Size int64
	Exec bool // any of the user, group and other execute bits
}

// World is what a condition's file and lookup tests ask of the request
// around it.
type World struct {
	// Stat is apr_stat of a path; link asks about the path itself, not
	// what it points to (APR_FINFO_LINK).
	Stat func(path string, link bool) FileInfo
	// LookupURL is a subrequest for a URL path (ap_sub_req_lookup_uri):
	// its status; made is false where no subrequest may be made
	// (subreq_ok). nil makes none.
	LookupURL func(uri string) (status int, made bool)
	// LookupFile is a subrequest for a file path
	// (ap_sub_req_lookup_file): its status and the file it ends on; made
	// is false where no subrequest may be made. nil makes none.
	LookupFile func(path string) (status int, filename string, made bool)
}

// ErrExpr is returned for a condition on an ap_expr, which orderly does
// not evaluate.
var ErrExpr = errors.New("RewriteCond expr: orderly does not evaluate ap_expr conditions")

// Eval is apply_rewrite_cond for the condition's TestString already
// expanded (input): whether the condition holds. A regex that matches
// (and is not negated) becomes the %N captures (rc). An error says the
// pattern could not be evaluated (the regex engine's limits): the caller
// fails closed.
func (c *Cond) Eval(input string, w World, rc *Backrefs) (bool, error) {
	input = cString(input)
	var ok bool
	switch c.Type {
	case CondFileExists:
		ok = w.stat(input, false).Kind == FileRegular
	case CondFileSize:
		fi := w.stat(input, false)
		ok = fi.Kind == FileRegular && fi.Size > 0
	case CondFileLink:
		ok = w.stat(input, true).Kind == FileLink
	case CondFileDir:
		ok = w.stat(input, false).Kind == FileDir
	case CondFileXBit:
		fi := w.stat(input, false)
		ok = fi.Kind != FileNone && fi.Exec
	case CondLookupURL:
		if input != "" && w.LookupURL != nil {
			status, made := w.LookupURL(input)
			ok = made && status < 400
		}
	case CondLookupFile:
		if input != "" && w.LookupFile != nil {
			// "double-check that file exists since default result is 200"
			status, file, made := w.LookupFile(input)
			ok = made && status < 300 && w.stat(file, false).Kind != FileNone
		}
	case CondStrGE, CondStrGT:
		basis := 0
		if c.Type == CondStrGT {
			basis = 1
		}
		ok = c.compare(input) >= basis
	case CondStrLE, CondStrLT:
		basis := 0
		if c.Type == CondStrLT {
			basis = -1
		}
		ok = c.compare(input) <= basis
	case CondStrEQ:
		if c.NoCase {
			ok = strcasecmp(input, c.Pattern) == 0
		} else {
			ok = input == c.Pattern
		}
	case CondIntGE:
		ok = atoi(input) >= atoi(c.Pattern)
	case CondIntGT:
		ok = atoi(input) > atoi(c.Pattern)
	case CondIntLE:
		ok = atoi(input) <= atoi(c.Pattern)
	case CondIntLT:
		ok = atoi(input) < atoi(c.Pattern)
	case CondIntEQ:
		ok = atoi(input) == atoi(c.Pattern)
	case CondExpr:
		return false, ErrExpr
	default:
		idx, err := c.Regex.FindStringSubmatchIndex(input)
		if err != nil {
			return false, err
		}
		ok = idx != nil
		if ok && !c.Negate {
			*rc = Backrefs{Source: input, Index: idx}
		}
	}
	return ok != c.Negate, nil
}

func (w World) stat(path string, link bool) FileInfo {
	if w.Stat == nil || path == "" {
		return FileInfo{}
	}
	return w.Stat(path, link)
}

// compare is the string comparisons' order: strcasecmp's sign under
// [NC], else compare_lexicography's, which orders by length first.
func (c *Cond) compare(input string) int {
	if c.NoCase {
		return strcasecmp(input, c.Pattern)
	}
	switch {
	case len(input) > len(c.Pattern):
		return 1
	case len(input) < len(c.Pattern):
		return -1
	}
	return strings.Compare(input, c.Pattern) // bytes, as unsigned chars
}

// strcasecmp's sign: byte by byte, ASCII letters folded.
func strcasecmp(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := lower(a[i]), lower(b[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
