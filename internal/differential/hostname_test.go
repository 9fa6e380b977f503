package differential

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// hostProbes are Host headers whose fix_hostname (server/vhost.c over
// apr_parse_addr_port and apr_inet_pton) the test asks Apache about:
// IPv6 literals with brackets, zone IDs and ports, ports at and beyond
// their range, trailing dots, case.
var hostProbes = []string{
	// IPv6 literals.
	"[::1]", "[::1]:8080", "[::1]:0080", "[::FFFF:1.2.3.4]", "[ABCD::EF]:81",
	"[::]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:1.2.3.4]", "[::1.2.3.4]",
	"[1:2:3:4:5:6:7:8:9]", "[1:2:3:4:5:6:7::8]", "[1:2:3:4:5:6:7:1.2.3.4]",
	"[12345::]", "[00001::]", "[000000000001::]", "[::ffff:1.2.3.04]", "[::ffff:001.2.3.4]",
	"[::ffff:1.2.3.256]", "[::ffff:1.2.3.255]", "[::ffff:1.2.3.9]",
	"[a000::]", "[FFFF::]", "[a0000::]", "[A0000::]", "[::1.2.3]", "[1.2.3.4::]", "[::1.2.3.4.5]", "[::1.2.3.4.]",
	"[1::2:]", "[1:]", "[:1]", "[::1:]", "[1::2::3]", "[:::]", "[:]", "[]", "[1.2.3.4]",
	"[fe80::1%eth0]", "[fe80::1%25eth0]", "[fe80::1%]", "[fe80::1%eth0]:80",
	"[::1]:", "[::1]:0", "[::1]:65535", "[::1]:65536", "[::1]x", "[::1", "::1]", "::1",
	"[::1]]", "[[::1]]", "[::1]:80:80", "[::1]:4294967376", "[::g]", "[::1 ]", "[ ::1]",
	// Names.
	"Example.TEST", "example.test.", "EXAMPLE.test.:80", "example.test..", "example.test:",
	"example.test:0", "example.test:65535", "example.test:65536", "example.test:4294967376",
	"example.test:-1", "example.test:+80", "a..b", "a:b:80", "a:b", "123", "123:80", ":80",
	"1.2.3.4:80", "a/b", `a\b`, "a@B", "a%41", ".", "..", "a.", "ex_ample.test", "A.b", "a.Z", "x.\xc3\x89A",
}

// TestHostNameApache sends each of hostProbes to Apache 2.4
// (HttpProtocolOptions Unsafe, UseCanonicalName Off) for a directory
// without its slash: mod_dir answers 301 with a Location built from the
// host name fix_hostname left (ap_get_server_name_for_url brackets one
// with a colon), or Apache answers 400 for a Host it refuses.
// walk.HostName must say the same.
func TestHostNameApache(t *testing.T) {
	apachetest.Require(t)
	root, err := os.MkdirTemp("", "orderly-hostname-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := apachetest.Start(t, apachetest.Options{DocumentRoot: root,
		Extra: "HttpProtocolOptions Unsafe\nUseCanonicalName Off\n<Directory />\nRequire all granted\n</Directory>\n"})
	for _, h := range hostProbes {
		resp, err := apachetest.Do(srv.Addr, apachetest.Request{Method: "GET", Target: "/d", Header: [][2]string{{"Host", h}}})
		if err != nil {
			t.Errorf("Host %q: %v", h, err)
			continue
		}
		apache, apacheOK := "", false
		switch resp.Status {
		case 400:
		case 301:
			apacheOK = true
			loc := strings.TrimSuffix(strings.TrimPrefix(resp.Location, "http://"), "/d/")
			if rest, ok := strings.CutPrefix(loc, "["); ok {
				apache = rest[:strings.LastIndexByte(rest, ']')]
			} else {
				apache, _, _ = strings.Cut(loc, ":")
			}
		default:
			t.Errorf("Host %q: Apache answered %d", h, resp.Status)
			continue
		}
		got, ok := walk.HostName(h)
		if ok != apacheOK || ok && got != apache {
			t.Errorf("Host %q: walk.HostName = %q, %v; Apache: %q, %v (%d %s)", h, got, ok, apache, apacheOK, resp.Status, resp.Location)
		} else {
			t.Logf("Host %q: %q, %v (%d %s)", h, got, ok, resp.Status, resp.Location)
		}
	}
}
