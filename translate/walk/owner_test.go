package walk

import (
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// needRoot skips a test that gives files away, unless CI=true.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("giving files to other users needs root, which CI=true runs as")
		}
		t.Skip("giving files to other users needs root")
	}
}

// sysless is a FileInfo without the system's stat data.
type sysless struct{ fs.FileInfo }

func (sysless) Sys() any { return nil }

type syslessFS struct{ FS }

func (f syslessFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.FS.Stat(name)
	if err != nil {
		return nil, err
	}
	return sysless{fi}, nil
}

// TestFileOwners: who owns a file, as mod_authz_owner asks: apr_stat
// (a symbolic link is followed), then the names of the IDs in this
// machine's user and group database; through the path map.
func TestFileOwners(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	write := func(name string, uid, gid int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
		return p
	}
	daemon, err := user.Lookup("daemon")
	if err != nil {
		t.Fatal(err)
	}
	// The group of another name than the user's, so that the two
	// lookups cannot stand in for each other.
	bin, err := user.LookupGroup("bin")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(daemon.Uid)
	gid, _ := strconv.Atoi(bin.Gid)
	write("daemons", uid, gid)
	write("ghost", 4242, 4343)
	if err := os.Symlink("daemons", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(filepath.Join(dir, "link"), 0, 0); err != nil {
		t.Fatal(err)
	}
	o := newFileOwners(NewPathMap(OS, map[string]string{"/srv/www": dir}))
	for _, tt := range []struct {
		name        string
		owner, grp  string
		st, groupSt policy.OwnerStatus
	}{
		{"/srv/www/daemons", "daemon", "bin", policy.OwnerFound, policy.OwnerFound},
		{"/srv/www/link", "daemon", "bin", policy.OwnerFound, policy.OwnerFound},
		{"/srv/www/ghost", "", "", policy.OwnerNoName, policy.OwnerNoName},
		{"/srv/www/missing", "", "", policy.OwnerNoStat, policy.OwnerNoStat},
		{"/srv/www/daemons/", "", "", policy.OwnerNoStat, policy.OwnerNoStat},
		{"/srv/www/", "root", "root", policy.OwnerFound, policy.OwnerFound},
	} {
		if got, st := o.FileOwner(tt.name); got != tt.owner || st != tt.st {
			t.Errorf("FileOwner(%s) = %q, %v; want %q, %v", tt.name, got, st, tt.owner, tt.st)
		}
		if got, st := o.FileGroup(tt.name); got != tt.grp || st != tt.groupSt {
			t.Errorf("FileGroup(%s) = %q, %v; want %q, %v", tt.name, got, st, tt.grp, tt.groupSt)
		}
	}
	bare := newFileOwners(syslessFS{OS})
	if _, st := bare.FileOwner(filepath.Join(dir, "daemons")); st != policy.OwnerNoInfo {
		t.Errorf("no stat data: owner %v", st)
	}
	if _, st := bare.FileGroup(filepath.Join(dir, "daemons")); st != policy.OwnerNoInfo {
		t.Errorf("no stat data: group %v", st)
	}
	var none *fileOwners
	if _, st := none.FileOwner(dir); st != policy.OwnerNoStat {
		t.Errorf("nil fileOwners: %v", st)
	}
}

// Require file-owner through the walk: r->filename is the file the walk
// found (the directory for a directory's URL, the file
// before path info), and a <Files> section's index subrequest asks about
// the index file.
func TestWalkFileOwner(t *testing.T) {
	needRoot(t)
	mods := append(slices.Clone(translate.FragmentModules), "authz_owner_module")
	conf := `<Directory @DOCROOT@/o>
AuthType Basic
AuthName o
AuthUserFile /dev/null
Require file-owner
</Directory>
<Directory @DOCROOT@/f>
AuthType Basic
AuthName f
AuthUserFile /dev/null
Require valid-user
<Files index.html>
Require file-owner
</Files>
</Directory>
`
	e, root := engineMods(t, translate.Compat24, mods, conf, "o/alice.html", "o/index.html", "o/bob/index.html", "f/index.html")
	daemon, _ := user.Lookup("daemon")
	uid, _ := strconv.Atoi(daemon.Uid)
	chown := func(name string, uid int) {
		if err := os.Chown(filepath.Join(root, name), uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	chown("o/alice.html", uid)
	chown("o/bob", uid)
	chown("f/index.html", uid)
	e.id = users{"daemon": "ok", "root": "ok"}
	for _, tt := range []struct {
		target, user string
		want         int
	}{
		{"/o/alice.html", "daemon:ok", 0},
		{"/o/alice.html", "root:ok", 401},
		{"/o/alice.html/more", "daemon:ok", 0},
		{"/o/alice.html/more", "root:ok", 401},
		{"/o/missing.html", "daemon:ok", 401},
		{"/o/", "root:ok", 0},
		{"/o/", "daemon:ok", 401},
		{"/o/bob/", "daemon:ok", 0},
		{"/o/bob/", "root:ok", 401},
		{"/o/bob/index.html", "root:ok", 0},
		{"/f/", "daemon:ok", 0},
		{"/f/", "root:ok", 401},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8", user: tt.user})
		if res.Status != tt.want {
			t.Errorf("%s as %s: %d, want %d (%v)", tt.target, tt.user, res.Status, tt.want, res.Logs())
		}
	}
}

// groups22 is users with each user's groups in the group file.
type groups22 struct {
	users
	groups map[string][]string
}

func (g groups22) Groups(file, user string) ([]string, bool, error) {
	gs, ok := g.groups[user]
	return gs, ok, nil
}

// 2.2's mod_authz_owner in the auth_checker chain, through translate
// and the walk (semantics "2.2", Debian 2.2's modules and mod_authz_owner,
// loaded without LoadModule lines: mod_authz_owner, then
// mod_authz_groupfile, then mod_authz_user): "file-owner" is the owner
// of r->filename, "file-group" its group, which mod_authz_groupfile
// looks for among the user's groups (without case);
// AuthzOwnerAuthoritative Off makes the two lines either/or, and On
// (the default, set again below) makes the first one final.
// policy/owner22_test.go holds the hook to the 2.2.x sources line by
// line.
func TestWalkFileOwner22(t *testing.T) {
	needRoot(t)
	mods := append(slices.Clone(translate.FragmentModules22), "authz_owner_module")
	conf := `<Directory @DOCROOT@/o>
AuthType Basic
AuthName o
AuthUserFile /dev/null
Require file-owner
</Directory>
<Directory @DOCROOT@/g>
AuthType Basic
AuthName g
AuthUserFile /dev/null
AuthGroupFile /dev/null
Require file-group
</Directory>
<Directory @DOCROOT@/e>
AuthType Basic
AuthName e
AuthUserFile /dev/null
AuthGroupFile /dev/null
AuthzOwnerAuthoritative Off
Require file-owner
Require file-group
</Directory>
<Directory @DOCROOT@/e/strict>
AuthzOwnerAuthoritative On
</Directory>
`
	e, root := engineMods(t, translate.Legacy22, mods, conf, "o/daemon.html", "o/root.html", "g/bin.html", "e/x.html", "e/strict/x.html")
	id := func(name string, group bool) int {
		var s string
		if group {
			g, err := user.LookupGroup(name)
			if err != nil {
				t.Fatal(err)
			}
			s = g.Gid
		} else {
			u, err := user.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			s = u.Uid
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	chown := func(name, owner, group string) {
		if err := os.Chown(filepath.Join(root, name), id(owner, false), id(group, true)); err != nil {
			t.Fatal(err)
		}
	}
	chown("o/daemon.html", "daemon", "daemon")
	chown("g/bin.html", "root", "bin")
	chown("e/x.html", "daemon", "bin")
	chown("e/strict/x.html", "daemon", "bin")
	e.id = groups22{users{"daemon": "ok", "root": "ok", "carol": "ok"}, map[string][]string{"carol": {"BIN"}, "root": {"other"}}}
	for _, tt := range []struct {
		target, user string
		want         int
		log          string // the 2.2 module's log line, if any
	}{
		{"/o/daemon.html", "daemon:ok", 0, ""},
		{"/o/daemon.html", "root:ok", 401, "Authorization of user root to access /o/daemon.html failed, reason: file owner daemon does not match."},
		{"/o/root.html", "root:ok", 0, ""},
		{"/o/missing.html", "daemon:ok", 401, "Authorization of user daemon to access /o/missing.html failed, reason: could not stat file " + root + "/o/missing.html"},
		{"/o/", "root:ok", 0, ""},
		{"/g/bin.html", "carol:ok", 0, ""},
		{"/g/bin.html", "root:ok", 401, "Authorization of user root to access /g/bin.html failed, reason: file group 'bin' does not match."},
		{"/g/bin.html", "daemon:ok", 401, "Authorization of user daemon to access /g/bin.html failed, reason: user doesn't appear in group file (/dev/null)."},
		{"/g/missing.html", "carol:ok", 401, "Authorization of user carol to access /g/missing.html failed, reason: could not stat file " + root + "/g/missing.html"},
		{"/e/x.html", "daemon:ok", 0, ""},
		{"/e/x.html", "carol:ok", 0, ""},
		{"/e/x.html", "root:ok", 401, "Authorization of user root to access /e/x.html failed, reason: file group 'bin' does not match."},
		{"/e/strict/x.html", "daemon:ok", 0, ""},
		{"/e/strict/x.html", "carol:ok", 401, "Authorization of user carol to access /e/strict/x.html failed, reason: file owner daemon does not match."},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8", user: tt.user})
		log := ""
		for _, l := range res.Logs() {
			if l.Code == "" {
				log = l.Message()
			}
		}
		if res.Status != tt.want || log != tt.log {
			t.Errorf("%s as %s: %d %q, want %d %q", tt.target, tt.user, res.Status, log, tt.want, tt.log)
		}
	}
}
