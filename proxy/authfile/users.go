package authfile

import (
	"fmt"
	"strings"

	"github.com/tg123/go-htpasswd"
)

// Result is the outcome of a password check. Its values map to the
// outcomes of mod_authn_file and the messages httpd logs for them.
type Result int

const (
	// OK means the password is the user's.
	OK Result = iota
	// Mismatch means the user is in the file but the password is not
	// theirs, or their line has a hash that can never match
	// (AH01617 "Password Mismatch").
	Mismatch
	// NotFound means no line of the file names the user
	// (AH01618 "user X not found").
	NotFound
)

func (r Result) String() string {
	switch r {
	case OK:
		return "OK"
	case Mismatch:
		return "Mismatch"
	case NotFound:
		return "NotFound"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Users is a parsed password file (AuthUserFile). It is immutable and
// safe for concurrent use.
type Users struct {
	name        string
	users       map[string]userEntry
	unsupported int
}

// A userEntry is the line that decides for a user.
type userEntry struct {
	m    htpasswd.EncodedPasswd // nil if the hash can never match
	hash string
	line int
}

// ParseUsers parses data, the content of the password file name, in the
// format of htpasswd (see the package documentation).
//
// It returns one *LineError for each line it could not use: a line with
// no colon, a hash in no supported format or a malformed one
// (ErrUnsupportedHash), or a second line for a user (ErrDuplicateUser).
// Such a line never lets a password through. As in httpd, the first line
// for a user decides even if it is unusable: a line with no colon or with
// an unusable hash makes every password of its user a Mismatch.
//
// The Users returned is never nil.
func ParseUsers(name string, data []byte) (*Users, []error) {
	u := &Users{name: name, users: make(map[string]userEntry)}
	var errs []error
	r := lineReader{s: string(data)}
	for {
		line, n, ok := r.next()
		if !ok {
			break
		}
		if line == "" || line[0] == '#' {
			continue
		}
		// mod_authn_file: the user is the text up to the first ':', the
		// hash the text after the run of ':' up to the next ':'.
		// A line with no colon is all user name, which is not quoted in
		// errors: the line may be "user password".
		user, rest, hasColon := getword(line, ':')
		if prev, dup := u.users[user]; dup {
			if hasColon {
				errs = append(errs, lineError(name, n, "%w %q ignored: line %d defines it", ErrDuplicateUser, user, prev.line))
			} else {
				errs = append(errs, lineError(name, n, "%w with no colon ignored: line %d defines it", ErrDuplicateUser, prev.line))
			}
			continue
		}
		if n == 1 && hasColon && strings.HasPrefix(user, "\uFEFF") {
			errs = append(errs, lineError(name, n, "user name %q begins with a byte order mark, which is part of the name", user))
		}
		e := userEntry{line: n}
		if !hasColon {
			u.unsupported++
			errs = append(errs, lineError(name, n, "%w: the user this line names has no password", ErrNoColon))
		} else {
			hash, _, _ := getword(rest, ':')
			m, err := parseHash(hash)
			if err != nil {
				u.unsupported++
				errs = append(errs, &LineError{File: name, Line: n, Err: fmt.Errorf("user %q: %w", user, err)})
			} else {
				e.m, e.hash = m, hash
			}
		}
		u.users[user] = e
	}
	if r.danglingLine != 0 {
		errs = append(errs, &LineError{File: name, Line: r.danglingLine, Err: ErrContinuedAtEOF})
	}
	return u, errs
}

// Check checks password against the hash of the first line that names
// user. The computed hash is compared with the stored one in constant
// time. A nil Users has no users.
func (u *Users) Check(user, password string) Result {
	if u == nil {
		return NotFound
	}
	e, ok := u.users[user]
	switch {
	case !ok:
		return NotFound
	case e.m != nil && e.m.MatchesPassword(password):
		return OK
	}
	return Mismatch
}

// Name returns the name the file was parsed under.
func (u *Users) Name() string {
	if u == nil {
		return ""
	}
	return u.name
}

// Len returns the number of users in the file, those whose line can never
// match included.
func (u *Users) Len() int {
	if u == nil {
		return 0
	}
	return len(u.users)
}

// Unsupported returns the number of users whose line can never match: a
// line with no colon, or with a hash in no supported format, or a
// malformed one.
func (u *Users) Unsupported() int {
	if u == nil {
		return 0
	}
	return u.unsupported
}
