package apachetest

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

const corpusDir = "../../testdata/corpus"

const sampleCase = `What the case is about.

-- legacy.conf --
<Directory "@DOCROOT@/admin">
    AuthUserFile @AUTH@/users
    Alias /x @EXTRA@/x
</Directory>
-- docroot/index.html --
root @DOCROOT@
-- docroot/admin/ --
-- docroot/deep/er/file.txt --
deep
-- auth/users --
alice:hash
-- extra/x/y.txt --
y
-- requests --
# comment

GET / 8.8.8.8 want=200
GET /admin/ 10.0.0.1 u=alice:secret want=401
`

func TestParseCase(t *testing.T) {
	c, err := ParseCase("dir/007-sample.txtar", []byte(sampleCase))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "007-sample" || c.Comment != "What the case is about.\n\n" {
		t.Errorf("name %q, comment %q", c.Name, c.Comment)
	}
	if len(c.Files) != 5 || len(c.Requests) != 2 {
		t.Fatalf("%d files, %d requests; want 5, 2", len(c.Files), len(c.Requests))
	}
	if c.BackendKeepsAccess || c.Backend() == c {
		t.Error("a case without a backend file: its backend is without the access rules")
	}
	k, err := ParseCase("dir/k.txtar", []byte(strings.Replace(sampleCase, "-- legacy.conf --", "-- backend --\nkeeps-access its rules read them\n-- legacy.conf --", 1)))
	if err != nil || !k.BackendKeepsAccess || k.BackendWhy != "its rules read them" || k.Backend() != k {
		t.Errorf("keeps-access: %v %+v", err, k)
	}
	// Line numbers count from the top of the txtar file.
	if c.Requests[0].Line != 20 || c.Requests[1].Line != 21 {
		t.Errorf("request lines %d, %d; want 20, 21", c.Requests[0].Line, c.Requests[1].Line)
	}
}

func TestParseCaseErrors(t *testing.T) {
	tests := []struct {
		edit func(string) string
		err  string
	}{
		{func(s string) string { return strings.Replace(s, "want=401", "want=4O1", 1) }, `dir/c.txtar:21: bad "want=4O1"`},
		{func(s string) string { return strings.Replace(s, "-- legacy.conf --", "-- legacy.cnf --", 1) }, `unexpected file "legacy.cnf"`},
		{func(s string) string { return strings.Replace(s, "-- legacy.conf --", "-- docroot/x --", 1) }, "no legacy.conf"},
		{func(s string) string { return s[:strings.Index(s, "-- requests --")] }, "no requests"},
		{func(s string) string { return s[:strings.Index(s, "# comment")] }, "requests has no request"},
		{func(s string) string { return strings.Replace(s, "docroot/admin/", "docroot/../admin/", 1) }, `bad file name "docroot/../admin/"`},
		{func(s string) string { return strings.Replace(s, "docroot/admin/", "docroot//admin/", 1) }, `bad file name "docroot//admin/"`},
		{func(s string) string { return strings.Replace(s, "docroot/admin/", "docroot/", 1) }, `bad file name "docroot/"`},
		{func(s string) string { return strings.Replace(s, "docroot/admin/", "docroot/index.html", 1) }, `file "docroot/index.html" appears twice`},
		{func(s string) string { return strings.Replace(s, "-- docroot/admin/ --", "-- docroot/admin/ --\nx", 1) }, `names a directory`},
		{func(s string) string {
			return strings.Replace(s, "-- legacy.conf --", "-- backend --\nkeeps-access\n-- legacy.conf --", 1)
		}, `backend: want "keeps-access" and the reason`},
		{func(s string) string {
			return strings.Replace(s, "-- legacy.conf --", "-- backend --\nkeep access: why\n-- legacy.conf --", 1)
		}, `backend: want "keeps-access"`},
	}
	for _, tt := range tests {
		_, err := ParseCase("dir/c.txtar", []byte(tt.edit(sampleCase)))
		if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "dir/c.txtar:") {
			t.Errorf("error %v, want dir/c.txtar: ...%s...", err, tt.err)
		}
	}
}

func TestMaterialize(t *testing.T) {
	c, err := ParseCase("sample.txtar", []byte(sampleCase))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "case")
	l, err := c.Materialize(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Layout{Dir: dir, DocRoot: dir + "/docroot", Auth: dir + "/auth", Extra: dir + "/extra", Legacy: dir + "/legacy.conf"}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("layout %+v, want %+v", l, want)
	}
	files := map[string]string{
		"legacy.conf":              "<Directory \"" + l.DocRoot + "/admin\">\n    AuthUserFile " + l.Auth + "/users\n    Alias /x " + l.Extra + "/x\n</Directory>\n",
		"docroot/index.html":       "root " + l.DocRoot + "\n",
		"docroot/deep/er/file.txt": "deep\n",
		"auth/users":               "alice:hash\n",
		"extra/x/y.txt":            "y\n",
		"docroot/admin/":           "",
		"docroot/deep/":            "",
		"docroot/deep/er/":         "",
		"extra/x/":                 "",
		"docroot/":                 "",
		"auth/":                    "",
		"extra/":                   "",
		"./":                       "",
	}
	var found []string
	err = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if fi.IsDir() {
			rel += "/"
			if fi.Mode().Perm() != 0o755 {
				t.Errorf("%s: mode %v, want 0755", rel, fi.Mode().Perm())
			}
		} else {
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v, want 0644", rel, fi.Mode().Perm())
			}
			data, _ := os.ReadFile(path)
			if string(data) != files[rel] {
				t.Errorf("%s = %q, want %q", rel, data, files[rel])
			}
		}
		if _, ok := files[rel]; !ok {
			t.Errorf("unexpected %s", rel)
		}
		found = append(found, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != len(files) {
		t.Errorf("found %v", found)
	}
	if ents, _ := os.ReadDir(l.DocRoot + "/admin"); len(ents) != 0 {
		t.Errorf("docroot/admin is not empty: %v", ents)
	}
}

func TestLoadCorpus(t *testing.T) {
	cases, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if i > 0 && cases[i-1].Name >= c.Name {
			t.Errorf("cases not sorted: %s before %s", cases[i-1].Name, c.Name)
		}
		for _, r := range c.Requests {
			if r.Want == "" {
				t.Errorf("%s:%d: no want=", c.Path, r.Line)
			}
		}
	}
	if _, err := LoadCorpus(t.TempDir()); err == nil {
		t.Error("LoadCorpus of an empty directory: no error")
	}
}

// TestCorpusOracleWants replays every corpus case that looks up no host
// name ([Case.UsesNames]) on the oracle (Apache 2.4 with mod_access_compat
// and mod_remoteip) and checks the want= values, so that a case that no
// longer means what it says fails loudly. One server serves all the cases,
// reloaded between them.
func TestCorpusOracleWants(t *testing.T) {
	cases, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	StartLDAP(t, cases) // for the cases that authenticate against LDAP
	var s *Server
	for _, c := range cases {
		if c.UsesNames() {
			// Its lookups must not leave the machine: the differential
			// test checks its want= on the oracle inside a private name
			// service (names.go).
			continue
		}
		l, err := c.Materialize(TempDir(t))
		if err != nil {
			t.Fatal(err)
		}
		fresh := s == nil
		if fresh {
			s = Start(t, l.OracleOptions())
		}
		off := fileSize(s.errPath())
		t.Run(c.Name, func(t *testing.T) {
			if !fresh {
				s.Reload(t, l.OracleOptions())
			}
			for _, r := range c.Requests {
				resp, err := doCase(s, l, r) // tls_test.go
				if err != nil {
					t.Errorf("%s:%d: %s: %v", c.Path, r.Line, r, err)
					continue
				}
				if r.Want != "" && !resp.Matches(r.Want) {
					t.Errorf("%s:%d: %s: got %d (%s), want %s", c.Path, r.Line, r, resp.Status, resp.Class(), r.Want)
				}
			}
			if t.Failed() {
				t.Logf("error log of the oracle:\n%s", logTail(s.errPath(), off))
			}
		})
	}
}

// A case's modules file and its symbolic links (NAME@symlink: the target,
// then optionally owner=USER).
func TestMaterializeSymlinksModules(t *testing.T) {
	const text = `Links.
-- legacy.conf --
-- modules --
autoindex
negotiation
-- docroot/link.html@symlink --
@EXTRA@/secret.html
-- docroot/rel@symlink --
index.html
-- docroot/other.html@symlink --
@EXTRA@/secret.html
owner=nobody
-- extra/secret.html --
s
-- requests --
GET /link.html 8.8.8.8
`
	c, err := ParseCase("links.txtar", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"autoindex", "negotiation"}; !reflect.DeepEqual(c.Modules, want) {
		t.Errorf("modules %v, want %v", c.Modules, want)
	}
	l, err := c.Materialize(filepath.Join(t.TempDir(), "case"))
	if err != nil {
		if os.Geteuid() != 0 && strings.Contains(err.Error(), "needs root") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if got := l.OracleOptions().LoadedModules(); !strings.HasSuffix(strings.Join(got, " "), "remoteip_module autoindex_module negotiation_module") {
		t.Errorf("oracle modules %v", got)
	}
	for name, target := range map[string]string{"link.html": l.Extra + "/secret.html", "rel": "index.html", "other.html": l.Extra + "/secret.html"} {
		got, err := os.Readlink(filepath.Join(l.DocRoot, name))
		if err != nil || got != target {
			t.Errorf("%s -> %q (%v), want %q", name, got, err, target)
		}
	}
	fi, err := os.Lstat(filepath.Join(l.DocRoot, "other.html"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid == uint32(os.Geteuid()) {
		t.Errorf("other.html is owned by %d, not nobody", uid)
	}
	for _, bad := range []string{"-- docroot/x@symlink --\n\n", "-- docroot/x@symlink --\na\nowner\n"} {
		if _, err := ParseCase("bad.txtar", []byte(strings.Replace(text, "-- extra/secret.html --", bad+"-- extra/secret.html --", 1))); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ParseCase("bad.txtar", []byte(strings.Replace(text, "autoindex\n", "autoindex_module\n", 1))); err == nil || !strings.Contains(err.Error(), "bad module") {
		t.Errorf("modules autoindex_module: %v", err)
	}
}

// A case's owners file (PATH USER[:GROUP]) gives its files and
// directories away; a NAME@db file becomes a Berkeley DB database.
func TestMaterializeOwnersDB(t *testing.T) {
	const text = `Owners.
-- legacy.conf --
-- owners --
# comment
docroot/a.html daemon
docroot/d/ nobody:daemon
docroot/d/b.html bin:nogroup
docroot/n.html 4242:4343
-- docroot/a.html --
a
-- docroot/d/b.html --
b
-- docroot/n.html --
n
-- auth/users@db --
alice hash:groups
-- requests --
GET /a.html 8.8.8.8
`
	c, err := ParseCase("owners.txtar", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []Owner{{"docroot/a.html", "daemon", "", 5}, {"docroot/d", "nobody", "daemon", 6}, {"docroot/d/b.html", "bin", "nogroup", 7}, {"docroot/n.html", "4242", "4343", 8}}
	if !reflect.DeepEqual(c.Owners, want) {
		t.Errorf("owners %+v, want %+v", c.Owners, want)
	}
	l, err := c.Materialize(filepath.Join(t.TempDir(), "case"))
	if err != nil {
		if os.Geteuid() != 0 && os.Getenv("CI") != "true" && strings.Contains(err.Error(), "needs root") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	for _, o := range want[:3] {
		u, _ := user.Lookup(o.User)
		gname := o.Group
		if gname == "" {
			g, _ := user.LookupGroupId(u.Gid)
			gname = g.Name
		}
		g, _ := user.LookupGroup(gname)
		fi, err := os.Stat(filepath.Join(l.Dir, o.Path))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fmt.Sprint(st.Uid) != u.Uid || fmt.Sprint(st.Gid) != g.Gid {
			t.Errorf("%s: owned by %d:%d, want %s:%s (%s:%s)", o.Path, st.Uid, st.Gid, u.Uid, g.Gid, o.User, gname)
		}
	}
	if fi, err := os.Stat(filepath.Join(l.DocRoot, "n.html")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 4242 || fi.Sys().(*syscall.Stat_t).Gid != 4343 {
		t.Errorf("n.html: %v, not owned by 4242:4343", err)
	}
	head, err := os.ReadFile(filepath.Join(l.Auth, "users"))
	if err != nil || len(head) < 16 || binary.LittleEndian.Uint32(head[12:]) != 0x061561 {
		t.Errorf("auth/users is no Berkeley DB hash database (%v)", err)
	}
	for _, bad := range []string{"docroot/a.html\n", "docroot/none.html daemon\n", "../x daemon\n", "docroot/a.html :g\n", "other/a daemon\n"} {
		if _, err := ParseCase("bad.txtar", []byte(strings.Replace(text, "# comment\n", bad, 1))); err == nil {
			t.Errorf("owners %q: no error", bad)
		}
	}
}
