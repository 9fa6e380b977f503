package convert

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var textCases = []string{
	"", "\n", "LoadModule a b\n", "  \tLoadModule   a_module  b.so  c d e f\r\n",
	"User www-data", "user\twww", "Group\v1", "  GROUP x\n", "Userx y", "User \n", "User\t\r\n",
	"#User x", "Group", "Users a", "a\u00a0b c", "\u2028User x", "x\x00y z",
	"LoadModule access_compat_module modules/mod_access_compat.so\n",
}

// FuzzFields holds fields to strings.Fields' answer (and firstWord, where
// it answers, too), userOrGroup to the regular expression it replaced,
// and containsFold to strings.Contains of the text in lower case.
func FuzzFields(f *testing.F) {
	for _, c := range textCases {
		f.Add(c)
	}
	userGroup := regexp.MustCompile(`(?m)^[ \t]*([Uu][Ss][Ee][Rr]|[Gg][Rr][Oo][Uu][Pp])[ \t]+\S`)
	f.Fuzz(func(t *testing.T, l string) {
		var buf [4]string
		want := strings.Fields(l)
		want = want[:min(len(want), 4)]
		if got := fields(l, &buf); !slices.Equal(got, want) {
			t.Fatalf("fields(%q) = %q, want %q", l, got, want)
		}
		if w, ok := firstWord(l); ok && (len(want) == 0 && w != "" || len(want) > 0 && w != want[0]) {
			t.Fatalf("firstWord(%q) = %q, fields %q", l, w, want)
		}
		if got, want := userOrGroup(l), userGroup.MatchString(l); got != want {
			t.Fatalf("userOrGroup(%q) = %v, want %v", l, got, want)
		}
		for _, w := range []string{"loadmodule", "x", "shmcb", "access_compat", "_"} {
			if got, want := containsFold(l, w), strings.Contains(asciiLower(l), w); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, want %v", l, w, got, want)
			}
		}
	})
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestApplyEdits(t *testing.T) {
	end := func(text ...string) edit { return edit{from: atEnd, to: atEnd, text: text} }
	tests := []struct {
		name, src string
		es        []edit
		want      string
	}{
		{"none", "a\nb\n", nil, "a\nb\n"},
		{"replace", "a\nb\nc\n", []edit{{from: 2, to: 2, text: []string{"B1", "B2"}}}, "a\nB1\nB2\nc\n"},
		{"delete", "a\nb\nc\n", []edit{{from: 1, to: 2}}, "c\n"},
		{"out of order, overlapping", "a\nb\nc\nd\n", []edit{{from: 3, to: 4, text: []string{"x"}}, {from: 1, to: 3, text: []string{"y"}}}, "y\nd\n"},
		{"past the end", "a\n", []edit{{from: 1, to: 5, text: []string{"x"}}}, "a\n"},
		{"append", "a\nb\n", []edit{end("z")}, "a\nb\nz\n"},
		{"append, no final newline", "a\nb", []edit{end("z")}, "a\nb\nz\n"},
		{"append twice", "a", []edit{end("y"), end("z")}, "a\ny\nz\n"},
		{"append to empty", "", []edit{end("z")}, "z\n"},
		{"all deleted, then append", "a\nb", []edit{{from: 1, to: 2}, end("z")}, "z\n"},
		{"last line edited, no final newline", "a\nb", []edit{{from: 2, to: 2, text: []string{"B"}}}, "a\nB\n"},
		{"compat module", "LoadModule access_compat_module m.so\nx\n", nil, "# orderly DIR-10: mod_access_compat no longer needed: LoadModule access_compat_module m.so\nx\n"},
	}
	for _, tt := range tests {
		if got, _ := applyEdits([]byte(tt.src), tt.es, false, false); string(got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if got, _ := applyEdits([]byte("LoadModule access_compat_module m.so\n"), nil, true, false); string(got) != "LoadModule access_compat_module m.so\n" {
		t.Errorf("keepCompat: %q", got)
	}
}

// TestContainsFold plants words in texts of every length up to 40, at
// every place and in mixed case, among letters that start and end them,
// bytes that fold onto letters only with 0x20 set, and '_' (which has it
// clear: a word that starts or ends with it is compared a byte at a
// time); containsFold must find them
// exactly where strings.Contains finds them in the text in lower case.
func TestContainsFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fill := []byte("sShHaAtT_\x7f@`\x80\xe0 \nz")
	for _, w := range []string{"shmcb", "fileetag", "addoutputfilterbytype", "sh", "x", "access_compat", "hats", "a_t", "_sh", "sa_"} {
		for n := 0; n <= 40; n++ {
			for range 200 {
				b := make([]byte, n)
				for i := range b {
					b[i] = fill[rng.IntN(len(fill))]
				}
				if at := rng.IntN(n + 2); at+len(w) <= n {
					for j := range len(w) {
						c := w[j]
						if rng.IntN(2) == 0 && 'a' <= c && c <= 'z' {
							c -= 'a' - 'A'
						}
						b[at+j] = c
					}
				}
				want := strings.Contains(asciiLower(string(b)), w)
				if got := containsFold(string(b), w); got != want {
					t.Fatalf("containsFold(%q, %q) = %v, want %v", b, w, got, want)
				}
				if got := containsFold(b, w); got != want {
					t.Fatalf("containsFold([]byte(%q), %q) = %v, want %v", b, w, got, want)
				}
			}
		}
	}
}

// TestAddModules checks where the modules 2.4 needs are added: after the
// last LoadModule line of the file that loads modules, with its
// directory, only those not loaded and only those needed.
func TestAddModules(t *testing.T) {
	tests := []struct {
		name, text string
		others     []string // other files of the configuration
		compat     bool     // lines left as they are need mod_access_compat
		want       string
	}{
		{"none loaded", "ServerName x\n", nil, true, "ServerName x\n"},
		{"after the last", "LoadModule a_module lib/mod_a.so\nLoadModule mpm_event_module \"/usr/lib/m/mod_mpm_event.so\"\nUser www\n", nil, false,
			"LoadModule a_module lib/mod_a.so\nLoadModule mpm_event_module \"/usr/lib/m/mod_mpm_event.so\"\n" +
				"# orderly ERR-02: needed by 2.4's Require and Auth* directives\nLoadModule authz_core_module /usr/lib/m/mod_authz_core.so\n" +
				"# orderly AUTH-01: needed by 2.4's Require ip and Require host\nLoadModule authz_host_module /usr/lib/m/mod_authz_host.so\n" +
				"# orderly ERR-04: needed by 2.4's Auth* directives\nLoadModule authn_core_module /usr/lib/m/mod_authn_core.so\n" +
				"# orderly ERR-01: 2.4's User and Group are mod_unixd's\n<IfModule !unixd_module>\n    LoadModule unixd_module /usr/lib/m/mod_unixd.so\n</IfModule>\n" +
				"User www\n"},
		{"compat kept, not loaded", "LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\n", nil, true,
			"LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\n" +
				"# orderly DIR-10: the Order/Allow/Deny/Satisfy lines left as they are need mod_access_compat\nLoadModule access_compat_module m/mod_access_compat.so\n"},
		{"compat kept, loaded", "LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\nLoadModule access_compat_module m/ac.so\n", nil, true,
			"LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\nLoadModule access_compat_module m/ac.so\n"},
		{"no newline at the end, shmcb elsewhere", "LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so", []string{"SSLSessionCache SHMCB:/x"}, false,
			"LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\n" +
				"# orderly ERR-03: 2.4's shmcb session cache is a module of its own\nLoadModule socache_shmcb_module m/mod_socache_shmcb.so\n"},
		{"all there", "LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\n", nil, false,
			"LoadModule mpm_worker_module m/w.so\nLoadModule authz_core_module m/c.so\nLoadModule authz_host_module m/h.so\nLoadModule authn_core_module m/n.so\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			have := map[string]bool{}
			text := []byte(tt.text)
			all := [][]byte{text}
			for _, o := range tt.others {
				all = append(all, []byte(o))
			}
			ml := loadsModules(text, have)
			if got := string(addModules(text, ml, have, all, tt.compat)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestRenamed holds renamed, renameLine's quick test of a line's first
// word, to the names renameLine acts on, in any case; and firstWord to
// fields where it answers.
func TestRenamed(t *testing.T) {
	names := []string{"keepalive", "loadmodule"}
	for n := range renames {
		names = append(names, n)
	}
	for _, n := range names {
		for _, w := range []string{n, strings.ToUpper(n), strings.ToUpper(n[:1]) + n[1:]} {
			if !renamed(w) {
				t.Errorf("renamed(%q) = false", w)
			}
		}
	}
	for _, w := range []string{"", "Allow", "KeepAliveTimeout", "LoadFile", "lockfil", strings.Repeat("x", 40)} {
		if renamed(w) {
			t.Errorf("renamed(%q) = true", w)
		}
	}
	for _, l := range append(textCases, "\u00a0KeepAlive 5\n", "Keep\u00a0Alive", "  MaxClients 5 # x\n") {
		var buf [4]string
		f := fields(l, &buf)
		if w, ok := firstWord(l); ok && (len(f) == 0 && w != "" || len(f) > 0 && w != f[0]) {
			t.Errorf("firstWord(%q) = %q, fields say %q", l, w, f)
		}
	}
}

// TestApplyEditsRename checks the renames made in the same pass as the
// edits: on the lines kept, not on those an edit replaces, with
// mod_access_compat's line commented out and a file without a newline at
// its end.
func TestApplyEditsRename(t *testing.T) {
	src := "MaxClients 150\nLoadModule access_compat_module m/a.so\n  KeepAlive 5\n<Directory />\n  Order deny,allow\n  MaxClients 3\n</Directory>\nLoadModule authn_alias_module m/mod_authn_alias.so"
	es := []edit{{from: 5, to: 6, text: []string{"  Require all granted"}}, {from: atEnd, to: atEnd, text: []string{"EnableSendfile On"}}}
	want := "# orderly DIR-02: MaxClients renamed MaxRequestWorkers\nMaxRequestWorkers 150\n" +
		"# orderly DIR-10: mod_access_compat no longer needed: LoadModule access_compat_module m/a.so\n" +
		"  # orderly DIR-07: KeepAlive takes only On or Off (2.2 read 5 as On)\n  KeepAlive On\n" +
		"<Directory />\n  Require all granted\n</Directory>\n" +
		"# orderly BLD-02: authn_alias_module is not part of 2.4: LoadModule authn_alias_module m/mod_authn_alias.so\n" +
		"LoadModule authn_core_module m/mod_authn_core.so\n" +
		"EnableSendfile On\n"
	got, n := applyEdits([]byte(src), es, false, true)
	if string(got) != want || n != 3 {
		t.Errorf("got %d renames and\n%s\nwant 3 and\n%s", n, got, want)
	}
}
