package authfile

// Tests against the real tools: Debian's htpasswd (apache2-utils) and the
// crypt(3) of the C library, through perl.

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTool returns the path of the program name. Without it, the test
// fails when the environment variable CI is "true" and is skipped
// otherwise.
func needTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is needed when CI=true: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	return path
}

// toolPasswords are the passwords the tests hash with the real tools.
var toolPasswords = []string{
	"secret",
	"",
	"x",
	"12345678",
	"123456789",
	"correct horse battery staple", // longer than 8: DES uses "correct "
	"pässwörd",                     // non-ASCII (UTF-8)
	"日本語のパスワード",
	"p@ss:w0rd with spaces\tand a tab",
	strings.Repeat("long", 25), // 100 bytes: bcrypt uses 72
}

// desKey returns the part of pw that traditional DES crypt uses: the low
// 7 bits of its first 8 bytes, up to a NUL.
func desKey(pw string) string {
	var b []byte
	for i := 0; i < len(pw) && i < 8 && pw[i] != 0; i++ {
		b = append(b, pw[i]&0x7f)
	}
	return string(b)
}

// candidates returns passwords to try against a hash of pw: pw itself and
// near misses.
func candidates(pw string) []string {
	c := []string{pw, pw + "x", "x" + pw, strings.ToUpper(pw), " " + pw, pw + "\n"}
	if pw != "" {
		c = append(c, pw[:len(pw)-1], pw[1:])
	}
	if len(pw) >= 8 {
		c = append(c, pw[:8], pw[:7]+"?"+pw[8:])
	}
	// The same low 7 bits with the high bit flipped: the same for DES.
	flip := []byte(pw)
	for i := range flip {
		flip[i] ^= 0x80
	}
	return append(c, string(flip))
}

// wantFor returns the Result a hash of pw of scheme should give for
// candidate.
func wantFor(scheme, pw, candidate string) Result {
	switch {
	case scheme == "des":
		if desKey(candidate) == desKey(pw) {
			return OK
		}
	case scheme == "bcrypt" && len(pw) > 72:
		if len(candidate) >= 72 && candidate[:72] == pw[:72] {
			return OK
		}
	case candidate == pw:
		return OK
	}
	return Mismatch
}

// TestHtpasswd checks hashes made by Debian's htpasswd in each of its
// formats.
func TestHtpasswd(t *testing.T) {
	htpasswd := needTool(t, "htpasswd")
	formats := []struct {
		scheme string
		flags  []string
	}{
		{"apr1", []string{"-m"}},
		{"bcrypt", []string{"-B", "-C", "4"}},
		{"sha1", []string{"-s"}},
		{"des", []string{"-d"}},
	}
	for _, f := range formats {
		t.Run(f.scheme, func(t *testing.T) {
			t.Parallel()
			for _, pw := range toolPasswords {
				args := append([]string{"-n", "-b"}, f.flags...)
				args = append(args, "user", pw)
				out, err := exec.Command(htpasswd, args...).Output()
				if err != nil {
					t.Fatalf("htpasswd %q: %v", args, err)
				}
				u, errs := ParseUsers("htpasswd", out)
				if len(errs) != 0 || u.Len() != 1 {
					t.Fatalf("htpasswd %q printed %q: %d users, errors %v", args, out, u.Len(), errs)
				}
				for _, c := range candidates(pw) {
					if got, want := u.Check("user", c), wantFor(f.scheme, pw, c); got != want {
						t.Errorf("%s hash of %q (%q): Check(%q) = %v, want %v", f.scheme, pw, bytes.TrimSpace(out), c, got, want)
					}
				}
				if got := u.Check("User", pw); got != NotFound {
					t.Errorf("Check(User) = %v, want NotFound", got)
				}
			}
		})
	}
}

// TestHtpasswdFile checks a file that htpasswd wrote with users in each
// of its formats.
func TestHtpasswdFile(t *testing.T) {
	htpasswd := needTool(t, "htpasswd")
	file := filepath.Join(t.TempDir(), "users")
	users := []struct{ flag, user, pw string }{
		{"-m", "alice", "alice's secret"},
		{"-B", "bob", "bob's secret"},
		{"-s", "carol", "carol's secret"},
		{"-d", "dave", "dave1234"},
	}
	for i, u := range users {
		args := []string{"-b", u.flag, file, u.user, u.pw}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(htpasswd, args...).CombinedOutput(); err != nil {
			t.Fatalf("htpasswd %q: %v\n%s", args, err, out)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u, errs := ParseUsers(file, data)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	for _, x := range users {
		for _, y := range users {
			want := Mismatch
			if x == y {
				want = OK
			}
			if got := u.Check(x.user, y.pw); got != want {
				t.Errorf("Check(%q, %q) = %v, want %v", x.user, y.pw, got, want)
			}
		}
	}
}

// perlCrypt returns crypt(pw, salt) of the C library for each pair, by way
// of perl.
func perlCrypt(t testing.TB, pairs [][2]string) []string {
	t.Helper()
	perl := needTool(t, "perl")
	var in bytes.Buffer
	for _, p := range pairs {
		if strings.ContainsAny(p[0]+p[1], "\t\n\x00") {
			t.Fatalf("perlCrypt can't pass %q", p)
		}
		in.WriteString(p[0] + "\t" + p[1] + "\n")
	}
	cmd := exec.Command(perl, "-ne", `chomp; my ($p, $s) = split /\t/, $_, 2; my $h = crypt($p, $s); print defined $h ? $h : "*undef", "\n"`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perl: %v", err)
	}
	var hashes []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		hashes = append(hashes, sc.Text())
	}
	if len(hashes) != len(pairs) {
		t.Fatalf("perl printed %d hashes for %d passwords", len(hashes), len(pairs))
	}
	return hashes
}

// TestCrypt checks hashes made by the crypt(3) of the C library (glibc or
// libxcrypt) for the schemes httpd on Linux accepts through it.
func TestCrypt(t *testing.T) {
	settings := []struct{ scheme, salt string }{
		{"des", "ab"},
		{"des", "./"},
		{"des", "zZ"},
		{"des", "9A"},
		{"md5crypt", "$1$saltsalt$"},
		{"md5crypt", "$1$$"},
		{"md5crypt", "$1$ab$"},
		{"sha256crypt", "$5$saltsalt$"},
		{"sha256crypt", "$5$$"},
		{"sha256crypt", "$5$rounds=1000$0123456789abcdef$"},
		{"sha512crypt", "$6$saltsalt$"},
		{"sha512crypt", "$6$rounds=5000$x$"},
		{"sha512crypt", "$6$rounds=1234$./AZaz09$"},
		{"bcrypt", "$2b$04$abcdefghijklmnopqrstuu"},
		{"bcrypt", "$2y$04$ABCDEFGHIJKLMNOPQRSTUu"},
		{"bcrypt", "$2a$04$0123456789./0123456789"},
	}
	var pairs [][2]string
	var schemes []string
	for _, s := range settings {
		for _, pw := range toolPasswords {
			if strings.ContainsAny(pw, "\t") {
				continue
			}
			pairs = append(pairs, [2]string{pw, s.salt})
			schemes = append(schemes, s.scheme)
		}
	}
	hashes := perlCrypt(t, pairs)
	for i, h := range hashes {
		scheme, pw := schemes[i], pairs[i][0]
		if strings.HasPrefix(h, "*") {
			if scheme == "bcrypt" {
				continue // a C library without bcrypt
			}
			t.Errorf("crypt(%q, %q) failed: %s", pw, pairs[i][1], h)
			continue
		}
		u, errs := ParseUsers("crypt", []byte("user:"+h+"\n"))
		if len(errs) != 0 {
			t.Errorf("crypt(%q, %q) = %q: %v", pw, pairs[i][1], h, errs)
			continue
		}
		cands := candidates(pw)
		if scheme != "des" && scheme != "md5crypt" {
			cands = cands[:3] // slow schemes: pw, pw+"x" and "x"+pw
		}
		for _, c := range cands {
			if got, want := u.Check("user", c), wantFor(scheme, pw, c); got != want {
				t.Errorf("crypt(%q, %q) = %q: Check(%q) = %v, want %v", pw, pairs[i][1], h, c, got, want)
			}
		}
	}
}

// TestCryptDESRandom compares desCrypt with the crypt(3) of the C library
// on random passwords of all byte values and random salts.
func TestCryptDESRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pairs [][2]string
	for range 2000 {
		pw := make([]byte, rng.IntN(12))
		for i := range pw {
			for pw[i] == 0 || pw[i] == '\t' || pw[i] == '\n' {
				pw[i] = byte(rng.IntN(256))
			}
		}
		salt := string([]byte{cryptAlphabet[rng.IntN(64)], cryptAlphabet[rng.IntN(64)]})
		pairs = append(pairs, [2]string{string(pw), salt})
	}
	for i, h := range perlCrypt(t, pairs) {
		p := pairs[i]
		if got := desCrypt(p[0], p[1][0], p[1][1]); string(got[:]) != h {
			t.Errorf("desCrypt(%q, %q) = %q, crypt(3) gives %q", p[0], p[1], got, h)
		}
	}
}

// TestBcrypt2aCountermeasure records a known difference: for $2a$ hashes
// of passwords that trip the countermeasure of crypt_blowfish against its
// old sign extension bug, the hash of crypt_blowfish (and so of httpd)
// differs from that of x/crypto/bcrypt, and the password is refused.
func TestBcrypt2aCountermeasure(t *testing.T) {
	// Test vectors of crypt_blowfish 1.3 (wrapper.c).
	const pw = "\xff\xff\xa3"
	u, errs := ParseUsers("t", []byte(
		"a:$2a$05$/OK.fbVrR/bpIqNJ5ianF.nqd1wy.pTMdcvrRWxyiGL2eMz.2a85.\n"+
			"b:$2b$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e\n"+
			"y:$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e\n"))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for user, want := range map[string]Result{"a": Mismatch, "b": OK, "y": OK} {
		if got := u.Check(user, pw); got != want {
			t.Errorf("Check(%q) = %v, want %v", user, got, want)
		}
	}
}
