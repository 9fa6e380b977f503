package authfile

import (
	"errors"
	"strings"
	"testing"
)

// Hashes of "secret" in each scheme, made with htpasswd and crypt(3).
var secretHashes = map[string]string{
	"apr1":        "$apr1$Tpo0SwTX$Mhl1nUjwY1KwjVPwpEkQi/",
	"bcrypt":      "$2y$05$x/C0M7evbie6gjGlldUYeuuEx3v9qOkR1w5WnIKww2otl5t9sFsSy",
	"sha1":        "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=",
	"des":         "RtEniGnSHsCVI",
	"md5crypt":    "$1$saltsalt$9xy1btjgzLYfb7hivXtC//",
	"sha256crypt": "$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA",
	"sha512crypt": "$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1",
}

// Hashes of "other".
const (
	otherAPR1 = "$apr1$E4SMok6P$Qf2Nvhi4HgBbqDSIiQx0X1"
	otherSHA1 = "{SHA}0JQeaNqPOBUf+Gph/Fn3xc+fyqI="
)

func TestCheckSchemes(t *testing.T) {
	for scheme, hash := range secretHashes {
		u, errs := ParseUsers("t", []byte("bob:"+hash+"\n"))
		if len(errs) != 0 {
			t.Fatalf("%s: %v", scheme, errs)
		}
		for pw, want := range map[string]Result{"secret": OK, "Secret": Mismatch, "": Mismatch, hash: Mismatch} {
			if got := u.Check("bob", pw); got != want {
				t.Errorf("%s: Check(bob, %q) = %v, want %v", scheme, pw, got, want)
			}
		}
		if got := u.Check("alice", "secret"); got != NotFound {
			t.Errorf("%s: Check(alice) = %v, want NotFound", scheme, got)
		}
	}
}

func TestPlaintextNeverMatches(t *testing.T) {
	data := "# users\nbob:secret\ncarol:{PLAIN}secret\n"
	u, errs := ParseUsers("/etc/orderly/users", []byte(data))
	if got := u.Check("bob", "secret"); got != Mismatch {
		t.Errorf("Check(bob, secret) = %v, want Mismatch", got)
	}
	if got := u.Check("carol", "secret"); got != Mismatch {
		t.Errorf("Check(carol, secret) = %v, want Mismatch", got)
	}
	if u.Unsupported() != 2 || u.Len() != 2 {
		t.Errorf("Unsupported() = %d, Len() = %d; want 2, 2", u.Unsupported(), u.Len())
	}
	if len(errs) != 2 {
		t.Fatalf("errors = %v, want 2", errs)
	}
	for i, err := range errs {
		prefix := []string{"/etc/orderly/users:2: ", "/etc/orderly/users:3: "}[i]
		if !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("error %q does not begin with %q", err, prefix)
		}
		if !errors.Is(err, ErrUnsupportedHash) {
			t.Errorf("error %q is not ErrUnsupportedHash", err)
		}
		var le *LineError
		if !errors.As(err, &le) || le.Line != i+2 || le.File != "/etc/orderly/users" {
			t.Errorf("error %q: LineError %+v", err, le)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error %q shows the password", err)
		}
	}
	// A DES hash is 13 characters: a 13-character plaintext password is
	// taken for one, and matches only the password it is the hash of.
	u, errs = ParseUsers("t", []byte("dave:Password12345\neve:Password12\n"))
	if got := u.Check("dave", "Password12345"); got != Mismatch {
		t.Errorf("Check(dave) = %v, want Mismatch", got)
	}
	if got := u.Check("eve", "Password12"); got != Mismatch {
		t.Errorf("Check(eve) = %v, want Mismatch", got)
	}
	if len(errs) != 1 {
		t.Errorf("errors = %v, want 1", errs)
	}
}

func TestUnsupportedHashes(t *testing.T) {
	tests := []struct{ hash, msg string }{
		{"", "empty"},
		{"{SSHA}pPNMUspJk6xvU7N5zSlYBNZQQ/5qyU9+", "{SSHA}"},
		{"{PLAIN}secret", "unknown format"},
		{"{MD5}Xr4ilOzQ4PCOq3aQ0qbuaQ==", "unknown format"},
		{"$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e", "$2x$"},
		{"$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7", "yescrypt"},
		{"$7$CU..../....SUSwlG5qlCVQ7bBKUSdbE.$vcrIkGeGkyvjmI5v0n2tG5/V8Ox0zrrYI7qY0p8nmE/", "scrypt"},
		{"_J9..CCCCXBrJUJV154M", "BSDi"},
		{"$apr1$Tpo0SwTX$Mhl1nUjwY1KwjVPwpEkQi", "malformed $apr1$"},   // short
		{"$apr1$Tpo0SwTXx$Mhl1nUjwY1KwjVPwpEkQi/", "malformed $apr1$"}, // salt of 9
		{"$apr1$Tpo0SwTX", "malformed $apr1$"},
		{"$apr1$Tpo0SwTX$Mhl1nUjwY1KwjVPwpEkQi*", "malformed $apr1$"},
		{"$1$saltsalt$9xy1btjgzLYfb7hivXtC/", "malformed $1$"},
		{"{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ", "malformed {SHA}"},
		{"{SHA}5en6G6MezRroT3XKqkdPOmY/BfR=", "malformed {SHA}"}, // not canonical
		{"{SHA}not base64!", "malformed {SHA}"},
		{"$2y$03$x/C0M7evbie6gjGlldUYeuuEx3v9qOkR1w5WnIKww2otl5t9sFsSy", "malformed bcrypt"},
		{"$2y$32$x/C0M7evbie6gjGlldUYeuuEx3v9qOkR1w5WnIKww2otl5t9sFsSy", "malformed bcrypt"},
		{"$2y$5$x/C0M7evbie6gjGlldUYeuuEx3v9qOkR1w5WnIKww2otl5t9sFsSy", "malformed bcrypt"},
		{"$2y$05$x/C0M7evbie6gjGlldUYeuuEx3v9qOkR1w5WnIKww2otl5t9sFsS", "malformed bcrypt"},
		{"$2y$05$x/C0M7evbie6gjGlldUYeuuEx3v9qOkR1w5WnIKww2otl5t9sFs$y", "malformed bcrypt"},
		{"$5$rounds=999$abc$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "malformed $5$"},
		{"$5$rounds=01000$abc$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "malformed $5$"},
		{"$5$rounds=1000000000$abc$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "malformed $5$"},
		{"$5$rounds=abcd$abc$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "malformed $5$"},
		{"$5$rounds=5000", "malformed $5$"},
		{"$5$0123456789abcdefg$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "malformed $5$"},
		{"$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5s", "malformed $5$"},
		{"$6$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA", "malformed $6$"},
		{"$6$", "malformed $6$"},
		{"RtEniGnSHsCV", "unknown format"},
		{"RtEniGnSHsCVI!", "unknown format"},
		{"Rt-niGnSHsCVI", "unknown format"},
	}
	for _, tt := range tests {
		u, errs := ParseUsers("f", []byte("bob:"+tt.hash+"\n"))
		if len(errs) != 1 {
			t.Errorf("%q: errors = %v, want 1", tt.hash, errs)
			continue
		}
		err := errs[0]
		if !errors.Is(err, ErrUnsupportedHash) || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "f:1: ") {
			t.Errorf("%q: error %q, want f:1: ErrUnsupportedHash with %q", tt.hash, err, tt.msg)
		}
		if len(tt.hash) > 6 && strings.Contains(err.Error(), tt.hash) {
			t.Errorf("%q: error %q shows the hash", tt.hash, err)
		}
		if got := u.Check("bob", "secret"); got != Mismatch {
			t.Errorf("%q: Check = %v, want Mismatch", tt.hash, got)
		}
		if u.Unsupported() != 1 {
			t.Errorf("%q: Unsupported() = %d, want 1", tt.hash, u.Unsupported())
		}
	}
}

func TestFirstLineWins(t *testing.T) {
	data := "alice:" + secretHashes["apr1"] + "\n" +
		"alice:" + otherAPR1 + "\n" +
		"bob:plaintext\n" +
		"bob:" + secretHashes["sha1"] + "\n" +
		"carol\n" +
		"carol:" + secretHashes["des"] + "\n"
	u, errs := ParseUsers("f", []byte(data))
	for _, tt := range []struct {
		user, pw string
		want     Result
	}{
		{"alice", "secret", OK},
		{"alice", "other", Mismatch},
		{"bob", "secret", Mismatch}, // an unusable first line decides
		{"bob", "plaintext", Mismatch},
		{"carol", "secret", Mismatch}, // so does a line with no colon
	} {
		if got := u.Check(tt.user, tt.pw); got != tt.want {
			t.Errorf("Check(%q, %q) = %v, want %v", tt.user, tt.pw, got, tt.want)
		}
	}
	var dup, nocolon int
	for _, err := range errs {
		switch {
		case errors.Is(err, ErrDuplicateUser):
			dup++
		case errors.Is(err, ErrNoColon):
			nocolon++
			if !strings.HasPrefix(err.Error(), "f:5: ") {
				t.Errorf("error %q: want line 5", err)
			}
		}
	}
	if len(errs) != 5 || dup != 3 || nocolon != 1 {
		t.Errorf("errors = %q: want 3 duplicates, 1 no colon, 1 unsupported", errs)
	}
	if u.Len() != 3 || u.Unsupported() != 2 {
		t.Errorf("Len() = %d, Unsupported() = %d; want 3, 2", u.Len(), u.Unsupported())
	}
}

func TestParseUsersSyntax(t *testing.T) {
	apr1, sha1, des := secretHashes["apr1"], secretHashes["sha1"], secretHashes["des"]
	tests := []struct {
		name, data string
		checks     map[string]Result // user → result for "secret"
		errs       int
	}{
		{"comments and blank lines", "# comment\n\n   \n  # indented comment\nbob:" + apr1 + "\n#alice:" + apr1,
			map[string]Result{"bob": OK, "#alice": NotFound, "alice": NotFound}, 0},
		{"white space around the line", " \t bob:" + apr1 + " \t\r\n", map[string]Result{"bob": OK}, 0},
		{"CRLF", "bob:" + apr1 + "\r\nalice:" + sha1 + "\r\n", map[string]Result{"bob": OK, "alice": OK}, 0},
		{"no final newline", "bob:" + apr1, map[string]Result{"bob": OK}, 0},
		{"user names are case-sensitive", "Bob:" + apr1, map[string]Result{"Bob": OK, "bob": NotFound, "BOB": NotFound}, 0},
		{"white space inside is kept", "bob :" + apr1 + "\nalice: " + apr1,
			map[string]Result{"bob ": OK, "bob": NotFound, "alice": Mismatch}, 1},
		{"a run of colons", "bob:::" + apr1, map[string]Result{"bob": OK}, 0},
		{"fields after the hash", "bob:" + apr1 + ":Bob Smith:x\nalice:" + des + ":", map[string]Result{"bob": OK, "alice": OK}, 0},
		{"empty hash", "bob:\nalice::", map[string]Result{"bob": Mismatch, "alice": Mismatch}, 2},
		{"empty user", ":" + apr1, map[string]Result{"": OK}, 0},
		{"continued line", "bob:$apr1$Tpo0SwTX$\\\nMhl1nUjwY1KwjVPwpEkQi/\nalice:" + sha1, map[string]Result{"bob": OK, "alice": OK}, 0},
		{"continued with CRLF", "bob:$apr1$Tpo0SwTX$\\\r\nMhl1nUjwY1KwjVPwpEkQi/\r\n", map[string]Result{"bob": OK}, 0},
		{"escaped backslash", "bob:" + des + "\\\\\nalice:" + sha1, map[string]Result{"bob": Mismatch, "alice": OK}, 1},
		{"continued at end of file", "alice:" + sha1 + "\nbob:" + apr1 + "\\\n", map[string]Result{"alice": OK, "bob": NotFound}, 1},
		{"NUL ends a line", "bob:" + apr1 + "\x00junk\nalice:" + sha1, map[string]Result{"bob": OK, "alice": OK}, 0},
		{"no colon", "bob\nalice " + apr1, map[string]Result{"bob": Mismatch, "alice": NotFound}, 2},
		{"byte order mark", "\uFEFFbob:" + apr1, map[string]Result{"bob": NotFound, "\uFEFFbob": OK}, 1},
		{"long line", "bob:" + apr1 + ":" + strings.Repeat("x", 20000), map[string]Result{"bob": OK}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, errs := ParseUsers("f", []byte(tt.data))
			if len(errs) != tt.errs {
				t.Errorf("errors = %q, want %d", errs, tt.errs)
			}
			for user, want := range tt.checks {
				if got := u.Check(user, "secret"); got != want {
					t.Errorf("Check(%q, secret) = %v, want %v", user, got, want)
				}
			}
		})
	}
}

func TestNilUsers(t *testing.T) {
	var u *Users
	if u.Check("bob", "x") != NotFound || u.Len() != 0 || u.Unsupported() != 0 || u.Name() != "" {
		t.Error("nil Users is not empty")
	}
}

func TestResultString(t *testing.T) {
	for r, want := range map[Result]string{OK: "OK", Mismatch: "Mismatch", NotFound: "NotFound", 7: "Result(7)"} {
		if got := r.String(); got != want {
			t.Errorf("Result(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		data     string
		lines    []string
		numbers  []int
		dangling int
	}{
		{"", nil, nil, 0},
		{"a\nb", []string{"a", "b"}, []int{1, 2}, 0},
		{"a\n\n  b  \n", []string{"a", "", "b"}, []int{1, 2, 3}, 0},
		{"a\\\nb\\\nc\nd", []string{"abc", "d"}, []int{1, 4}, 0},
		{"a \\\r\n b", []string{"a  b"}, []int{1}, 0},
		{"a\\\\\nb", []string{"a\\", "b"}, []int{1, 2}, 0},
		{"a\\\\\\\nb", []string{"a\\\\", "b"}, []int{1, 2}, 0}, // 2.2 looks at the last two only
		{"a\\", []string{"a\\"}, []int{1}, 0},
		{"x\na\\\n", []string{"x"}, []int{1}, 2},
		{"a\x00\\\nb", []string{"a", "b"}, []int{1, 2}, 0},
		{"\v\f a \r\r\n", []string{"a"}, []int{1}, 0},
	}
	for _, tt := range tests {
		r := lineReader{s: tt.data}
		var lines []string
		var numbers []int
		for {
			l, n, ok := r.next()
			if !ok {
				break
			}
			lines, numbers = append(lines, l), append(numbers, n)
		}
		if strings.Join(lines, "|") != strings.Join(tt.lines, "|") || len(lines) != len(tt.lines) ||
			!equalInts(numbers, tt.numbers) || r.danglingLine != tt.dangling {
			t.Errorf("%q: lines %q at %v, dangling %d; want %q at %v, dangling %d",
				tt.data, lines, numbers, r.danglingLine, tt.lines, tt.numbers, tt.dangling)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
