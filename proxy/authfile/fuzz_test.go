package authfile

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseUsers(f *testing.F) {
	f.Add([]byte("# users\nbob:secret\n"))
	f.Add([]byte("alice:" + secretHashes["apr1"] + "\nbob:" + secretHashes["bcrypt"] + "\r\n"))
	f.Add([]byte("carol:" + secretHashes["sha1"] + ":x\n  dave:" + secretHashes["des"] + "\\\n"))
	f.Add([]byte("eve:" + secretHashes["md5crypt"] + "\nfrank::" + secretHashes["sha256crypt"] + "\n"))
	f.Add([]byte("gina:" + secretHashes["sha512crypt"] + "\nhank:$6$rounds=1000$x$\nivan\n:\n\x00"))
	f.Add([]byte("judy:$apr1$$\nkim:{SHA}\nlou:$2y$04$\nmia:$5$$\nned:{SSHA}AAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, errs := ParseUsers("fuzz", data)
		if u == nil {
			t.Fatal("nil Users")
		}
		for _, err := range errs {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 || !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error %q is not a LineError of a line", err)
			}
		}
		if u.Unsupported() > u.Len() {
			t.Fatalf("Unsupported() = %d > Len() = %d", u.Unsupported(), u.Len())
		}
		for user, e := range u.users {
			if e.m == nil {
				if got := u.Check(user, e.hash); got != Mismatch {
					t.Fatalf("Check(%q) of an unusable line = %v", user, got)
				}
				continue
			}
			if strings.HasPrefix(e.hash, "$2") || strings.Contains(e.hash, "rounds=") {
				continue // may be slow at will
			}
			// No hash is a plaintext password.
			if got := u.Check(user, e.hash); got != Mismatch {
				t.Fatalf("Check(%q, its hash %q) = %v", user, e.hash, got)
			}
		}
		if got := u.Check("not\x00a user", ""); got != NotFound {
			t.Fatalf("Check of a user with a NUL = %v", got)
		}
	})
}

func FuzzParseGroups(f *testing.F) {
	f.Add([]byte("admins: alice bob\nstaff: bob carol\n"))
	f.Add([]byte("# c\nStaff : 'O\\'Brien' \"John Smith\" x\\\\y\nSTAFF:: a:b\\\n c\r\n"))
	f.Add([]byte("no colon\n: \"\" '\n\x00g: a"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, errs := ParseGroups("fuzz", data)
		if g == nil {
			t.Fatal("nil Groups")
		}
		for _, err := range errs {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 || !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error %q is not a LineError of a line", err)
			}
		}
		names := make(map[string]bool)
		for _, n := range g.Names() {
			k := asciiLower(n)
			if names[k] {
				t.Fatalf("group %q appears twice in Names()", n)
			}
			names[k] = true
		}
		for user, idx := range g.byUser {
			groups := g.GroupsOf(user)
			if len(groups) == 0 || len(groups) != len(idx) {
				t.Fatalf("GroupsOf(%q) = %q", user, groups)
			}
			seen := make(map[string]bool)
			for _, group := range groups {
				if !g.Member(user, group) || !g.Member(user, asciiUpper(group)) || !names[asciiLower(group)] {
					t.Fatalf("GroupsOf(%q) has %q, but Member says no", user, group)
				}
				if seen[group] {
					t.Fatalf("GroupsOf(%q) = %q has duplicates", user, groups)
				}
				seen[group] = true
			}
		}
	})
}
