package authfile

// Tests of DBM files against the real tools: Debian's htdbm and
// httxt2dbm (apache2-utils), and, where they are installed, db_dump
// (db-util) and gdbmtool (gdbmtool).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/policy"
)

// run runs a tool and fails the test if it fails.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// ageSDBM sets the modification times of an SDBM database an hour back,
// so that a Store trusts them.
func ageSDBM(t testing.TB, base string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, ext := range []string{".pag", ".dir"} {
		if err := os.Chtimes(base+ext, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHtdbmSDBM checks a file htdbm -TSDBM wrote with users of each of
// its hash formats, some with comments.
func TestHtdbmSDBM(t *testing.T) {
	htdbm := needTool(t, "htdbm")
	db := filepath.Join(t.TempDir(), "users")
	users := []struct {
		flags   []string
		user    string
		pw      string
		comment string
		want    Result // of the right password
	}{
		{[]string{"-m"}, "alice", "alice's secret", "staff,admin", OK},
		{[]string{"-B", "-C", "4"}, "bob", "bob's secret", "", OK},
		{[]string{"-s"}, "carol", "carol's secret", "a comment, with spaces", OK},
		{[]string{"-d"}, "dave", "dave1234", "", OK},
		// Plaintext: httpd on Unix hands it to crypt(3), which never
		// gives it back (htdbm -v, on this platform, says "Password
		// mismatch").
		{[]string{"-p"}, "erin", "erin's secret", "staff", Mismatch},
		{[]string{"-m"}, "jürgen", "pässwörd", "", OK},
	}
	for i, u := range users {
		args := append([]string{"-TSDBM", "-b"}, u.flags...)
		if i == 0 {
			args = append(args, "-c")
		}
		if u.comment != "" {
			args = append(args, "-t", db, u.user, u.pw, u.comment)
		} else {
			args = append(args, db, u.user, u.pw)
		}
		run(t, htdbm, args...)
	}
	ageSDBM(t, db)
	s, _ := testStore()
	var loadErrs []error
	s.OnLoad = func(_ string, errs []error) { loadErrs = append(loadErrs, errs...) }
	got, err := s.DBMUsers(db, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != len(users) || got.Unsupported() != 1 {
		t.Errorf("Len() = %d, Unsupported() = %d; want %d, 1", got.Len(), got.Unsupported(), len(users))
	}
	var re *RecordError
	if len(loadErrs) != 1 || !errors.As(loadErrs[0], &re) || re.Key != "erin" || !errors.Is(re, ErrUnsupportedHash) ||
		strings.Contains(re.Error(), "erin's secret") {
		t.Errorf("OnLoad errors %v, want one RecordError for erin that does not quote the password", loadErrs)
	}
	for _, x := range users {
		for _, y := range users {
			want := Mismatch
			if x.user == y.user {
				want = x.want
			}
			if r := got.Check(x.user, y.pw); r != want {
				t.Errorf("Check(%q, %q) = %v, want %v", x.user, y.pw, r, want)
			}
		}
	}
	// DES uses the first 8 bytes of a password.
	if r := got.Check("dave", "dave1234 and more"); r != OK {
		t.Errorf("Check(dave, longer password) = %v, want OK", r)
	}
	for _, user := range []string{"Alice", "alice ", "nobody", "", "alice:x"} {
		if r := got.Check(user, "alice's secret"); r != NotFound {
			t.Errorf("Check(%q) = %v, want NotFound", user, r)
		}
	}
	// htdbm -t stores "hash:comment": as a group file, the comment is
	// the groups field. Without -t, the value is the hash alone, which
	// has no ':', so the hash is the one group.
	g, err := s.DBMGroups(db, "sdbm")
	if err != nil {
		t.Fatal(err)
	}
	wantGroups := map[string][]string{
		"alice": {"staff", "admin"},
		"carol": {"a comment", " with spaces"},
		"erin":  {"staff"},
	}
	for _, u := range users {
		want := wantGroups[u.user]
		if want == nil {
			want = []string{got.users[u.user].hash}
		}
		if gs := g.GroupsOf(u.user); !slices.Equal(gs, want) || !g.Has(u.user) {
			t.Errorf("GroupsOf(%q) = %q (Has %v), want %q", u.user, gs, g.Has(u.user), want)
		}
	}
	// htdbm -l lists the users the iteration finds.
	listed := run(t, htdbm, "-TSDBM", "-l", db)
	for _, u := range users {
		if !strings.Contains(listed, "    "+u.user+" ") {
			t.Errorf("htdbm -l does not list %q:\n%s", u.user, listed)
		}
	}
}

// TestHtdbmSplits checks a file of users that htdbm added one by one,
// enough for its pages to split, and removed some of (delpair).
func TestHtdbmSplits(t *testing.T) {
	htdbm := needTool(t, "htdbm")
	db := filepath.Join(t.TempDir(), "users")
	const n = 150
	for i := range n {
		args := []string{"-TSDBM", "-b", "-s", "-t", db, fmt.Sprintf("user%03d", i), fmt.Sprintf("pw%d", i), fmt.Sprintf("g%d,all", i%5)}
		if i == 0 {
			args = slices.Insert(args, 1, "-c")
		}
		run(t, htdbm, args...)
	}
	for i := 0; i < n; i += 10 {
		run(t, htdbm, "-TSDBM", "-x", db, fmt.Sprintf("user%03d", i))
	}
	if info, err := os.Stat(db + ".dir"); err != nil || info.Size() == 0 {
		t.Fatalf("%s.dir: %v: no split", db, err)
	}
	s, _ := testStore()
	u, err := s.DBMUsers(db, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.DBMGroups(db, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		user, want := fmt.Sprintf("user%03d", i), OK
		wantGroups := []string{fmt.Sprintf("g%d", i%5), "all"}
		if i%10 == 0 {
			want, wantGroups = NotFound, nil
		}
		if r := u.Check(user, fmt.Sprintf("pw%d", i)); r != want {
			t.Errorf("Check(%q) = %v, want %v", user, r, want)
		}
		if gs := g.GroupsOf(user); !slices.Equal(gs, wantGroups) {
			t.Errorf("GroupsOf(%q) = %q, want %q", user, gs, wantGroups)
		}
	}
}

// dbmText is the text of a user and group file for httxt2dbm, whose lines
// are "key value". What Apache does with each record was checked against
// Apache httpd 2.4.71 (Debian) with AuthDBMType SDBM and AuthName Realm1:
// see TestHttxt2dbm.
var dbmText = strings.NewReplacer("HASH", secretHashes["apr1"]).Replace(`# comment
alice HASH:staff,Admin,,dev:comment
bob HASH
carol:Realm1 HASH:realmgroup
carol HASH:plaingroup
eve HASH::
frank HASH:,lead
dave grpA,grpB
gina HASH:a,b,a:
`)

func TestHttxt2dbm(t *testing.T) {
	httxt2dbm := needTool(t, "httxt2dbm")
	dir := t.TempDir()
	txt, db := filepath.Join(dir, "users.txt"), filepath.Join(dir, "users")
	if err := os.WriteFile(txt, []byte(dbmText), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, httxt2dbm, "-f", "SDBM", "-i", txt, "-o", db)
	id := NewIdentity()
	id.Map = func(p string) string { return filepath.Join(dir, p) }

	passwords := []struct {
		user string
		want policy.PasswordResult
	}{
		{"alice", policy.PasswordOK},
		{"bob", policy.PasswordOK},
		{"carol", policy.PasswordOK},
		{"eve", policy.PasswordOK},
		{"dave", policy.PasswordMismatch}, // its "hash" is grpA,grpB
		{"nobody", policy.UserNotFound},
		{"Alice", policy.UserNotFound},
	}
	for _, p := range passwords {
		got, err := id.CheckDBMPassword("users", "SDBM", p.user, "secret")
		if err != nil || got != p.want {
			t.Errorf("CheckDBMPassword(%q) = %v, %v; want %v", p.user, got, err, p.want)
		}
		if p.want == policy.PasswordOK {
			if got, _ := id.CheckDBMPassword("users", "SDBM", p.user, "Secret"); got != policy.PasswordMismatch {
				t.Errorf("CheckDBMPassword(%q, wrong password) = %v", p.user, got)
			}
		}
	}

	// Apache 2.4.71 granted Require dbm-group to: alice for staff,
	// Admin and dev but not admin nor comment; bob for his hash (a
	// value with no ':' is all groups); carol for realmgroup under
	// AuthName Realm1, plaingroup under AuthName Other; frank for
	// lead; eve for nothing; alice in a group-only file "alice grpB"
	// for grpB.
	groups := []struct {
		user, realm string
		want        []string
		has         bool
	}{
		{"alice", "Realm1", []string{"staff", "Admin", "dev"}, true},
		{"bob", "Realm1", []string{secretHashes["apr1"]}, true},
		{"carol", "Realm1", []string{"realmgroup"}, true},
		{"carol", "Other", []string{"plaingroup"}, true},
		{"carol", "", []string{"plaingroup"}, true},
		{"eve", "Realm1", nil, true},
		{"frank", "Realm1", []string{"lead"}, true},
		{"dave", "Realm1", []string{"grpA", "grpB"}, true},
		{"gina", "Realm1", []string{"a", "b"}, true},
		{"nobody", "Realm1", nil, false},
	}
	for _, g := range groups {
		got, has, err := id.DBMGroupsRealm("users", "SDBM", g.user, g.realm)
		if err != nil || !slices.Equal(got, g.want) || has != g.has {
			t.Errorf("DBMGroupsRealm(%q, %q) = %q, %v, %v; want %q, %v", g.user, g.realm, got, has, err, g.want, g.has)
		}
	}
	if got, has, err := id.DBMGroups("users", "SDBM", "carol"); err != nil || !slices.Equal(got, []string{"plaingroup"}) || !has {
		t.Errorf("DBMGroups(carol) = %q, %v, %v", got, has, err)
	}
	if got, has, err := id.DBMGroups("users", "SDBM", "carol:Realm1"); err != nil || !slices.Equal(got, []string{"realmgroup"}) || !has {
		t.Errorf("DBMGroups(carol:Realm1) = %q, %v, %v", got, has, err)
	}
	g, err := id.store.DBMGroups(db, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	// mod_authz_dbm compares group names with strcmp.
	if !g.Member("alice", "Admin") || g.Member("alice", "admin") || g.Member("alice", "comment") || g.Member("alice", "") {
		t.Error("Member compares DBM group names without case, or finds the comment or an empty name")
	}
}

// TestDBMLarge checks a file of several thousand users, written by
// httxt2dbm: its pages split, and the walk of the .dir bitmap finds each
// user.
func TestDBMLarge(t *testing.T) {
	httxt2dbm := needTool(t, "httxt2dbm")
	dir := t.TempDir()
	txt, db := filepath.Join(dir, "users.txt"), filepath.Join(dir, "users")
	const n = 6000
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "user%d-%s %s:g%d,all:c%d\n", i, []string{"a", "jürgen", "caf\xe9", "x"}[i%4], secretHashes["sha1"], i%7, i)
	}
	if err := os.WriteFile(txt, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, httxt2dbm, "-f", "SDBM", "-i", txt, "-o", db)
	pag, dirData := readSDBMFiles(t, db)
	if len(pag) < 200*sdbmPageSize || len(dirData) == 0 {
		t.Fatalf("%d pages, %d bytes of .dir: too few splits", len(pag)/sdbmPageSize, len(dirData))
	}
	s, _ := testStore()
	u, err := s.DBMUsers(db, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.DBMGroups(db, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	if u.Len() != n || u.Unsupported() != 0 {
		t.Fatalf("Len() = %d, Unsupported() = %d", u.Len(), u.Unsupported())
	}
	for i := range n {
		user := fmt.Sprintf("user%d-%s", i, []string{"a", "jürgen", "caf\xe9", "x"}[i%4])
		if r := u.Check(user, "secret"); r != OK {
			t.Fatalf("Check(%q) = %v", user, r)
		}
		if gs := g.GroupsOf(user); !slices.Equal(gs, []string{fmt.Sprintf("g%d", i%7), "all"}) {
			t.Fatalf("GroupsOf(%q) = %q", user, gs)
		}
	}
	for _, user := range []string{"user", "user1", "user6000-a", "user1-a", "USER0-a", "user0-a\x00"} {
		if r := u.Check(user, "secret"); r != NotFound {
			t.Errorf("Check(%q) = %v, want NotFound", user, r)
		}
		if g.Has(user) {
			t.Errorf("Has(%q)", user)
		}
	}
}

// TestDBMNULs checks records with NUL bytes, which htdbm can't write: a
// key with a NUL is left out (no request names it), and a value ends at
// its first NUL, as the C string Apache copies it into does.
func TestDBMNULs(t *testing.T) {
	pag, dir := buildSDBM(t, false, [][2]string{
		{"alice", secretHashes["sha1"] + "\x00junk"},
		{"bob\x00", secretHashes["sha1"]},
		{"carol", secretHashes["sha1"] + ":g1\x00:g2,g3"},
		{"dave", "g1,g2\x00,g3"},
	})
	base := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(base+".pag", pag, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".dir", dir, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := testStore()
	var loadErrs []error
	s.OnLoad = func(_ string, errs []error) { loadErrs = append(loadErrs, errs...) }
	u, err := s.DBMUsers(base, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]Result{"alice": OK, "bob": NotFound, "bob\x00": NotFound, "carol": OK} {
		if r := u.Check(user, "secret"); r != want {
			t.Errorf("Check(%q) = %v, want %v", user, r, want)
		}
	}
	var re *RecordError
	if len(loadErrs) != 2 || !errors.As(loadErrs[0], &re) || re.Key != "bob\x00" || !errors.Is(loadErrs[1], ErrUnsupportedHash) {
		t.Errorf("OnLoad errors %v, want the NUL key of bob and the hash of dave", loadErrs)
	}
	g, err := s.DBMGroups(base, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string][]string{"alice": {secretHashes["sha1"]}, "carol": {"g1"}, "dave": {"g1", "g2"}} {
		if gs := g.GroupsOf(user); !slices.Equal(gs, want) {
			t.Errorf("GroupsOf(%q) = %q, want %q", user, gs, want)
		}
	}
	if g.Has("bob") || g.Has("bob\x00") {
		t.Error("the key with a NUL is in Groups")
	}
}

// TestDBMRefused checks the files of the DBM types that need a C library:
// refused, with what the file is and a command that converts it.
func TestDBMRefused(t *testing.T) {
	htdbm := needTool(t, "htdbm")
	dir := t.TempDir()
	bdb, gdbm, def := filepath.Join(dir, "users.db"), filepath.Join(dir, "users.gdbm"), filepath.Join(dir, "users.default")
	sdbm := filepath.Join(dir, "users.sdbm")
	run(t, htdbm, "-c", "-b", "-TDB", bdb, "alice", "secret")
	run(t, htdbm, "-c", "-b", "-TGDBM", gdbm, "alice", "secret")
	run(t, htdbm, "-c", "-b", def, "alice", "secret") // this machine's default
	run(t, htdbm, "-c", "-b", "-TSDBM", sdbm, "alice", "secret")

	bdbConvert := "db_dump -p " + bdb + ` | sed -n '/^HEADER=END$/,/^DATA=END$/{/=END$/d;s/^ //;p}' | paste -d' ' - - | httxt2dbm -f SDBM -i - -o ` + bdb
	tests := []struct {
		path, dbmType string
		notExist      bool
		want          []string // in the message
	}{
		{bdb, "DB", false, []string{bdb + ": ", "AuthDBMType DB", "a Berkeley DB hash database", "orderly reads only SDBM", bdbConvert, "set AuthDBMType SDBM"}},
		{bdb, "db", false, []string{"a Berkeley DB hash database"}},
		{def, "", false, []string{"AuthDBMType DB", "a Berkeley DB hash database", "db_dump -p " + def}},
		{def, "Default", false, []string{"a Berkeley DB hash database"}},
		{gdbm, "GDBM", false, []string{"AuthDBMType GDBM", "a GDBM database", "gdbmtool -r " + gdbm + " list | httxt2dbm -f SDBM -i - -o " + gdbm}},
		{gdbm, "DB", false, []string{"a GDBM database", "not of type DB", "gdbmtool -r"}},
		{bdb, "gdbm", false, []string{"a Berkeley DB hash database", "not of type GDBM", "db_dump"}},
		{sdbm, "NDBM", false, []string{"AuthDBMType NDBM", "are an SDBM database: set AuthDBMType SDBM"}},
		{gdbm, "NDBM", true, []string{".pag: no such file"}},
		{sdbm, "DB", true, []string{"no such file", sdbm + ".pag exists: an SDBM database needs AuthDBMType SDBM"}},
		{sdbm, "", true, []string{sdbm + ".pag exists"}},
		{bdb, "SDBM", true, []string{bdb + ".dir: no such file", bdb + " exists: a Berkeley DB hash database, not SDBM"}},
		{filepath.Join(dir, "missing"), "DB", true, []string{"no such file"}},
		{filepath.Join(dir, "missing"), "SDBM", true, []string{"missing.dir: no such file"}},
		{bdb, "foo", false, []string{`AuthDBMType "foo" is none of SDBM, GDBM, NDBM, DB and default`}},
		{bdb, "xdbm", false, []string{"is none of"}},
	}
	s, _ := testStore()
	for _, tt := range tests {
		for _, groups := range []bool{false, true} {
			var err error
			if groups {
				var g *Groups
				g, err = s.DBMGroups(tt.path, tt.dbmType)
				if g != nil {
					t.Errorf("DBMGroups(%s, %q) gave groups", tt.path, tt.dbmType)
				}
			} else {
				var u *Users
				u, err = s.DBMUsers(tt.path, tt.dbmType)
				if u != nil {
					t.Errorf("DBMUsers(%s, %q) gave users", tt.path, tt.dbmType)
				}
			}
			switch {
			case err == nil:
				t.Errorf("%s as %q: no error", tt.path, tt.dbmType)
				continue
			case tt.notExist && !errors.Is(err, fs.ErrNotExist), !tt.notExist && !errors.Is(err, ErrDBMUnsupported):
				t.Errorf("%s as %q: error %v, want ErrNotExist %v", tt.path, tt.dbmType, err, tt.notExist)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s as %q: error %q does not say %q", tt.path, tt.dbmType, err, w)
				}
			}
		}
	}

	// An Apache whose apr-util defaults to SDBM.
	s2, _ := testStore()
	s2.DefaultDBMType = "SDBM"
	for _, typ := range []string{"", "default", "DEFAULT"} {
		if u, err := s2.DBMUsers(sdbm, typ); err != nil || u.Check("alice", "secret") != OK {
			t.Errorf("DefaultDBMType SDBM: DBMUsers(%q) = %v, %v", typ, u, err)
		}
	}
	s2.DefaultDBMType = "default"
	if _, err := s2.DBMUsers(sdbm, ""); !errors.Is(err, ErrDBMUnsupported) {
		t.Errorf("DefaultDBMType default: error %v", err)
	}
}

// TestDBMConvert runs the commands of the messages for the Berkeley DB
// and GDBM files of testdata/dbm, written by htdbm -TDB and -TGDBM (alice,
// and bob with the comment staff,admin, both with {SHA} hashes), and
// reads the SDBM files they make. Without db_dump or gdbmtool, stand-ins
// print what the real tools printed for these files
// (users.db.dump, users.gdbm.list).
func TestDBMConvert(t *testing.T) {
	needTool(t, "httxt2dbm")
	sh := needTool(t, "sh")
	src, err := filepath.Abs("testdata/dbm")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for tool, out := range map[string]string{"db_dump": "users.db.dump", "gdbmtool": "users.gdbm.list"} {
		if _, err := exec.LookPath(tool); err == nil {
			t.Logf("%s: the real one", tool)
			continue
		}
		t.Logf("%s: a stand-in that prints testdata/dbm/%s", tool, out)
		script := fmt.Sprintf("#!/bin/sh\nexec cat %s\n", shellQuote(filepath.Join(src, out)))
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ file, dbmType string }{{"users.db", "DB"}, {"users.gdbm", "GDBM"}} {
		t.Run(c.dbmType, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(src, c.file))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			s, _ := testStore()
			_, err = s.DBMUsers(path, c.dbmType)
			msg := fmt.Sprint(err)
			_, cmd, ok := strings.Cut(msg, " apache2-utils): ")
			cmd, _, ok2 := strings.Cut(cmd, "; then set AuthDBMType SDBM")
			if !errors.Is(err, ErrDBMUnsupported) || !ok || !ok2 {
				t.Fatalf("DBMUsers(%s, %s): error %v has no command", c.file, c.dbmType, err)
			}
			run := exec.Command(sh, "-c", cmd)
			run.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")+string(os.PathListSeparator)+"/usr/sbin")
			if out, err := run.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
			u, err := s.DBMUsers(path, "SDBM")
			if err != nil {
				t.Fatal(err)
			}
			g, err := s.DBMGroups(path, "SDBM")
			if err != nil {
				t.Fatal(err)
			}
			if u.Len() != 2 || u.Check("alice", "alice secret") != OK || u.Check("bob", "bob secret") != OK || u.Check("bob", "alice secret") != Mismatch {
				t.Errorf("converted users wrong: %d users", u.Len())
			}
			if gs := g.GroupsOf("bob"); !slices.Equal(gs, []string{"staff", "admin"}) || g.Has("carol") {
				t.Errorf("converted groups of bob = %q", gs)
			}
		})
	}
}

// TestDBMStoreReload checks that a Store reads an SDBM database again
// when its .pag or its .dir changes, and only then.
func TestDBMStoreReload(t *testing.T) {
	htdbm := needTool(t, "htdbm")
	s, clock := testStore()
	loads := 0
	s.OnLoad = func(string, []error) { loads++ }
	db := filepath.Join(t.TempDir(), "users")
	run(t, htdbm, "-TSDBM", "-c", "-b", "-s", db, "alice", "one")
	ageSDBM(t, db)
	check := func(user, pw string, want Result) {
		t.Helper()
		u, err := s.DBMUsers(db, "SDBM")
		if err != nil {
			t.Fatalf("DBMUsers: %v", err)
		}
		if r := u.Check(user, pw); r != want {
			t.Errorf("Check(%q, %q) = %v, want %v", user, pw, r, want)
		}
	}
	check("alice", "one", OK)

	// A change is seen at the next check.
	run(t, htdbm, "-TSDBM", "-b", "-s", db, "alice", "two")
	run(t, htdbm, "-TSDBM", "-b", "-s", db, "bob", "three")
	check("alice", "one", OK)
	clock.Add(int64(time.Second))
	check("alice", "two", OK)
	check("bob", "three", OK)

	// Unchanged: not parsed again.
	ageSDBM(t, db)
	clock.Add(int64(time.Second))
	u1, _ := s.DBMUsers(db, "SDBM")
	before := loads
	clock.Add(int64(10 * time.Second))
	u2, _ := s.DBMUsers(db, "SDBM")
	if u1 != u2 || loads != before {
		t.Error("an unchanged database was parsed again")
	}

	// Only the .dir changes: read again (here it no longer fits the
	// .pag, and fails).
	dirData, err := os.ReadFile(db + ".dir")
	if err != nil {
		t.Fatal(err)
	}
	bad := make([]byte, sdbmDirBlock)
	for i := range bad {
		bad[i] = 0xff
	}
	if err := os.WriteFile(db+".dir", bad, 0o644); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Second))
	if _, err := s.DBMUsers(db, "SDBM"); !errors.Is(err, ErrSDBMMalformed) {
		t.Errorf("after the .dir changed: error %v, want ErrSDBMMalformed", err)
	}
	if err := os.WriteFile(db+".dir", dirData, 0o644); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Second))
	check("bob", "three", OK)

	// Removed: an error, no stale copy.
	if err := os.Remove(db + ".pag"); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Second))
	if u, err := s.DBMUsers(db, "SDBM"); !errors.Is(err, fs.ErrNotExist) || u != nil {
		t.Errorf("DBMUsers(no .pag) = %v, %v; want nil, ErrNotExist", u, err)
	}
}

// TestDBMStoreNotRegular checks that a directory in place of a .pag is an
// error.
func TestDBMStoreNotRegular(t *testing.T) {
	base := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(base+".dir", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(base+".pag", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore().DBMUsers(base, "SDBM"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("DBMUsers(directory .pag): error %v", err)
	}
}

func TestDBMStoreNoAllocs(t *testing.T) {
	pag, dir := buildSDBM(t, false, [][2]string{{"bob", secretHashes["sha1"] + ":g"}})
	base := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(base+".pag", pag, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".dir", dir, 0o644); err != nil {
		t.Fatal(err)
	}
	ageSDBM(t, base)
	s := NewStore()
	allocs := testing.AllocsPerRun(1000, func() {
		u, err := s.DBMUsers(base, "SDBM")
		if err != nil || u == nil {
			panic(err)
		}
		g, err := s.DBMGroups(base, "sdbm")
		if err != nil || !g.Member("bob", "g") {
			panic(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}
