package authfile

import (
	"slices"
	"strings"
)

// Groups is a parsed group file (AuthGroupFile), or the groups of a DBM
// group file (AuthDBMGroupFile, see Store.DBMGroups). It is immutable and
// safe for concurrent use.
type Groups struct {
	name   string
	groups []string         // distinct group names, as first written
	byUser map[string][]int // indexes into groups, in file order
	// exactCase is set for a DBM group file, whose group names
	// mod_authz_dbm compares with strcmp.
	exactCase bool
	// known holds the keys of a DBM group file, those of records that
	// name no group included; nil for a group file.
	known map[string]bool
}

// ParseGroups parses data, the content of the group file name, as
// groups_for_user of mod_authz_groupfile does.
//
// Each line is a group name, a colon and the names of members separated
// by white space; a member name may be in double or single quotes. White
// space at the end of the group name is ignored. A group may appear on
// several lines, and its members are those of all its lines. Group names
// are matched without regard to ASCII case, so "Staff" and "staff" are
// one group, named as on the first line that has a member.
//
// It returns one *LineError for each line with no colon (which httpd
// ignores, and so does ParseGroups) and for each unterminated quote
// (whose member name, as in httpd, runs to the end of the line).
//
// The Groups returned is never nil.
func ParseGroups(name string, data []byte) (*Groups, []error) {
	g := &Groups{name: name, byUser: make(map[string][]int)}
	var errs []error
	index := make(map[string]int) // lower-case group name → index in g.groups
	type membership struct {
		user  string
		group int
	}
	seen := make(map[membership]bool)
	r := lineReader{s: string(data)}
	for {
		line, n, ok := r.next()
		if !ok {
			break
		}
		if line == "" || line[0] == '#' {
			continue
		}
		group, rest, hasColon := getword(line, ':')
		if !hasColon {
			errs = append(errs, lineError(name, n, "%w after group name: line ignored", ErrNoColon))
			continue
		}
		group = strings.TrimRight(group, cSpace)
		gi := -1
		for rest != "" {
			var user string
			var unterminated bool
			user, rest, unterminated = getwordConf(rest)
			if unterminated {
				errs = append(errs, lineError(name, n, "%w in member name %q of group %q", ErrUnterminatedQuote, user, group))
			}
			if gi < 0 {
				key := asciiLower(group)
				i, ok := index[key]
				if !ok {
					i = len(g.groups)
					index[key] = i
					g.groups = append(g.groups, group)
				}
				gi = i
			}
			if m := (membership{user, gi}); !seen[m] {
				seen[m] = true
				g.byUser[user] = append(g.byUser[user], gi)
			}
		}
	}
	if r.danglingLine != 0 {
		errs = append(errs, &LineError{File: name, Line: r.danglingLine, Err: ErrContinuedAtEOF})
	}
	return g, errs
}

// Member reports whether user is a member of group. The user name is
// case-sensitive. The group name is matched without regard to ASCII case
// for a group file (mod_authz_groupfile), and with case for a DBM group
// file (mod_authz_dbm). A nil Groups has no groups.
func (g *Groups) Member(user, group string) bool {
	if g == nil {
		return false
	}
	for _, i := range g.byUser[user] {
		if g.groups[i] == group || !g.exactCase && asciiEqualFold(g.groups[i], group) {
			return true
		}
	}
	return false
}

// Has reports whether the file mentions user: for a group file, whether
// user is a member of a group; for a DBM group file, whether it has a
// record for user, which may name no group (mod_authz_dbm then denies
// with AH01801 "user is not part of the 'require'ed group(s)" rather than
// AH01800 "user doesn't appear in DBM group file"). A nil Groups mentions
// no one.
func (g *Groups) Has(user string) bool {
	if g == nil {
		return false
	}
	if g.known != nil {
		return g.known[user]
	}
	return len(g.byUser[user]) > 0
}

// GroupsOf returns the names of the groups user is a member of, in the
// order of the file, or nil if there are none. The caller may modify the
// slice.
func (g *Groups) GroupsOf(user string) []string {
	if g == nil {
		return nil
	}
	idx := g.byUser[user]
	if len(idx) == 0 {
		return nil
	}
	names := make([]string, len(idx))
	for k, i := range idx {
		names[k] = g.groups[i]
	}
	return names
}

// Names returns the names of all groups that have members, in the order
// of the file. The caller may modify the slice.
func (g *Groups) Names() []string {
	if g == nil {
		return nil
	}
	return slices.Clone(g.groups)
}

// Name returns the name the file was parsed under.
func (g *Groups) Name() string {
	if g == nil {
		return ""
	}
	return g.name
}

// asciiLower returns s with ASCII upper-case letters made lower-case, as
// apr_tolower does in the "C" locale.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// asciiEqualFold reports whether a and b are equal without regard to
// ASCII case, as strcasecmp in the "C" locale.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
