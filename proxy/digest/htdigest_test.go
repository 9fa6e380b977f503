package digest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

func TestLookupHTDigest(t *testing.T) {
	long := "x:r:" + strings.Repeat("a", maxStringLen) + "\n"
	tests := []struct {
		name        string
		file        string
		user, realm string
		ha1         string
		found       bool
	}{
		{"simple", "u:r:h\n", "u", "r", "h", true},
		{"no final newline", "u:r:h", "u", "r", "h", true},
		{"realm must match", "u:s:h1\nu:r:h2\n", "u", "r", "h2", true},
		{"first match wins", "u:r:h1\nu:r:h2\n", "u", "r", "h1", true},
		{"case-sensitive user", "U:r:h\n", "u", "r", "", false},
		{"case-sensitive realm", "u:R:h\n", "u", "r", "", false},
		{"comments and blank lines", "# u:r:x\n\n   \nu:r:h\n", "u", "r", "h", true},
		{"indented comment", "  # u:r:x\nu:r:h\n", "u", "r", "h", true},
		{"white space trimmed", " \tu:r:h \r\n", "u", "r", "h", true},
		{"CRLF", "u:r:h\r\n", "u", "r", "h", true},
		{"run of colons", "u::r:::h:extra\n", "u", "r", "h", true},
		{"empty hash", "u:r\n", "u", "r", "", true},
		{"empty hash with colon", "u:r:\n", "u", "r", "", true},
		{"realm with spaces", "u:My Realm:h\n", "u", "My Realm", "h", true},
		{"user with spaces", "a b:r:h\n", "a b", "r", "h", true},
		{"continued line", "u:r\\\n:h\n", "u", "r", "h", true},
		{"continued with CRLF", "u:r\\\r\n:h\r\n", "u", "r", "h", true},
		{"double backslash continues too", "u:r:h\\\\\nx\n", "u", "r", "h\\x", true},
		{"continued at EOF", "u:r:h\\\n", "u", "r", "h", true},
		{"NUL ends the line", "u:r:h\x00junk\nv:r:g\n", "v", "r", "g", true},
		{"NUL in the user", "u\x00v:r:h\n", "u", "", "", true},
		{"too long a line ends the scan", long + "u:r:h\n", "u", "r", "", false},
		{"a long line that fits", "x:r:" + strings.Repeat("a", maxStringLen-6) + "\nu:r:h\n", "u", "r", "h", true},
		{"too long at EOF", "u:r:h\n" + strings.Repeat("a", maxStringLen), "u", "r", "h", true},
		{"missing", "u:r:h\n", "v", "r", "", false},
		{"empty file", "", "u", "r", "", false},
	}
	for _, tt := range tests {
		ha1, found := LookupHTDigest(strings.NewReader(tt.file), tt.user, tt.realm)
		if ha1 != tt.ha1 || found != tt.found {
			t.Errorf("%s: got %q %v, want %q %v", tt.name, ha1, found, tt.ha1, tt.found)
		}
	}
}

func TestCfgReaderLongLines(t *testing.T) {
	// 8190 bytes and a newline fit the 8192-byte buffer; 8191 do not.
	for _, tt := range []struct {
		n    int
		ok   bool
		nl   bool
		cont bool
	}{
		{8190, true, true, false}, {8191, false, true, false}, {8190, true, false, false}, {8191, false, false, false},
		{8189, true, true, true},
	} {
		line := strings.Repeat("a", tt.n)
		if tt.cont {
			line = strings.Repeat("a", 4000) + "\\\n" + strings.Repeat("b", tt.n-4000)
		}
		if tt.nl {
			line += "\nnext\n"
		}
		r := cfgReader{r: bufio.NewReader(strings.NewReader(line))}
		got, ok := r.next()
		if ok != tt.ok {
			t.Errorf("%d bytes (newline %v, continued %v): ok %v", tt.n, tt.nl, tt.cont, ok)
			continue
		}
		if ok && len(got) != tt.n {
			t.Errorf("%d bytes: got %d", tt.n, len(got))
		}
	}
}

func TestHTDigestFile(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("u:r:h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ha1, found, err := HTDigestFile(pw)("u", "r"); ha1 != "h" || !found || err != nil {
		t.Errorf("got %q %v %v", ha1, found, err)
	}
	if _, found, err := HTDigestFile("/dev/null")("u", "r"); found || err != nil {
		t.Errorf("/dev/null: %v %v", found, err)
	}
	for _, tt := range []struct{ path, code string }{
		{"", "AH01621"},
		{filepath.Join(dir, "missing"), "AH01622"},
		{dir, "AH01622"},
	} {
		_, found, err := HTDigestFile(tt.path)("u", "r")
		var pe *ProviderError
		if found || !errors.As(err, &pe) || pe.Code != tt.code {
			t.Errorf("%q: %v %v, want %s", tt.path, found, err, tt.code)
		}
	}
}

// TestHtdigestTool reads a file that Apache's htdigest wrote.
func TestHtdigestTool(t *testing.T) {
	htdigest := apachetest.RequireTool(t, "htdigest", "apache2-utils")
	pw := filepath.Join(t.TempDir(), "pw")
	for i, u := range []struct{ user, realm, password string }{
		{"alice", "My Realm", "s3cret"}, {"bob", "My Realm", "pässword"}, {"alice", "Other", "x"},
	} {
		args := []string{pw, u.realm, u.user}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		// htdigest reads the password twice from the terminal, or from
		// standard input when there is none.
		cmd := exec.Command(htdigest, args...)
		cmd.Stdin = strings.NewReader(u.password + "\n" + u.password + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("htdigest %v: %v\n%s", args, err, out)
		}
		ha1, found, err := HTDigestFile(pw)(u.user, u.realm)
		if err != nil || !found || ha1 != HA1(u.user, u.realm, u.password) {
			t.Errorf("%s in %s: %q %v %v", u.user, u.realm, ha1, found, err)
		}
	}
}
