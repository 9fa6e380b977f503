package policy

import (
	"strings"
	"testing"
)

// fakeOwners answers from maps of file → owner and file → group; a file
// in neither cannot be stat'ed, and a name of "" is an ID without one.
type fakeOwners struct {
	owner, group map[string]string
	noInfo       bool
	asked        *int
}

func (f fakeOwners) lookup(m map[string]string, name string) (string, OwnerStatus) {
	if f.asked != nil {
		*f.asked++
	}
	if f.noInfo {
		return "", OwnerNoInfo
	}
	n, ok := m[name]
	switch {
	case !ok:
		return "", OwnerNoStat
	case n == "":
		return "", OwnerNoName
	}
	return n, OwnerFound
}

func (f fakeOwners) FileOwner(name string) (string, OwnerStatus) { return f.lookup(f.owner, name) }
func (f fakeOwners) FileGroup(name string) (string, OwnerStatus) { return f.lookup(f.group, name) }

var testOwners = fakeOwners{
	owner: map[string]string{"/www/alice.html": "alice", "/www/bob.html": "bob", "/www/ghost.html": "", "/www/dir/": "alice"},
	group: map[string]string{"/www/staff.html": "staff", "/www/ops.html": "ops", "/www/ghost.html": "", "/www/guests.html": "guests", "/www/Ops.html": "Ops"},
}

// TestFileOwnerGroup: Require file-owner (mod_authz_owner), file-group
// (mod_authz_groupfile) and dbm-file-group (mod_authz_dbm) of Apache 2.4,
// leaf by leaf: the result and the log lines, in Apache's order of
// checks (the group file before the file's group). Corpus 968 holds the
// same to Apache 2.4 with real files and users.
func TestFileOwnerGroup(t *testing.T) {
	dbmLayers := &Layers{DBMGroupFile: "/etc/groups.dbm", DBMGroupType: "SDBM", AuthName: "Staff area"}
	for _, tc := range []struct {
		name     string
		p        Provider
		user     string // "" no user
		file     string
		owners   FileOwners
		l        *Layers
		id       Identity
		noGroups bool // no AuthGroupFile
		want     Result
		logs     string
		reason   string // of the last log line
	}{
		{"owner: no user", ProvFileOwner, "", "/www/alice.html", testOwners, nil, testID, false, DeniedNoUser, "", ""},
		{"owner: the user", ProvFileOwner, "alice", "/www/alice.html", testOwners, nil, testID, false, Granted, "", ""},
		{"owner: a directory", ProvFileOwner, "alice", "/www/dir/", testOwners, nil, testID, false, Granted, "", ""},
		{"owner: another user", ProvFileOwner, "alice", "/www/bob.html", testOwners, nil, testID, false, Denied, "AH01637", "bob"},
		{"owner: compared with case", ProvFileOwner, "Alice", "/www/alice.html", testOwners, nil, testID, false, Denied, "AH01637", "alice"},
		{"owner: no filename", ProvFileOwner, "alice", "", testOwners, nil, testID, false, Denied, "AH01633", ""},
		{"owner: no file", ProvFileOwner, "alice", "/www/missing.html", testOwners, nil, testID, false, Denied, "AH01634", "/www/missing.html"},
		{"owner: no Owners", ProvFileOwner, "alice", "/www/alice.html", nil, nil, testID, false, Denied, "AH01634", "/www/alice.html"},
		{"owner: no owner information", ProvFileOwner, "alice", "/www/alice.html", fakeOwners{noInfo: true}, nil, testID, false, Denied, "AH01635", ""},
		{"owner: an ID without a name", ProvFileOwner, "alice", "/www/ghost.html", testOwners, nil, testID, false, Denied, "AH01636", ""},

		{"group: no user", ProvFileGroup, "", "/www/staff.html", testOwners, nil, testID, false, DeniedNoUser, "", ""},
		{"group: a member", ProvFileGroup, "alice", "/www/ops.html", testOwners, nil, testID, false, Granted, "", ""},
		{"group: without case", ProvFileGroup, "alice", "/www/staff.html", testOwners, nil, testID, false, Granted, "", ""},
		{"group: not a member", ProvFileGroup, "bob", "/www/ops.html", testOwners, nil, testID, false, Denied, "AH01671", ""},
		{"group: in no group", ProvFileGroup, "carol", "/www/ops.html", testOwners, nil, testID, false, Denied, "AH01670", "groups"},
		{"group: no group file", ProvFileGroup, "alice", "/www/ops.html", testOwners, nil, testID, true, Denied, "AH01668", ""},
		{"group: no Identity", ProvFileGroup, "alice", "/www/ops.html", testOwners, nil, nil, false, Denied, "AH01668", ""},
		{"group: group file unreadable", ProvFileGroup, "alice", "/www/ops.html", testOwners, nil, fakeIdentity{groupErr: true}, false, Denied, "AH01669", "groups"},
		{"group: no filename", ProvFileGroup, "alice", "", testOwners, nil, testID, false, Denied, "AH01638", ""},
		{"group: no file", ProvFileGroup, "alice", "/www/missing.html", testOwners, nil, testID, false, Denied, "AH01639", "/www/missing.html"},
		{"group: no group information", ProvFileGroup, "alice", "/www/ops.html", fakeOwners{noInfo: true}, nil, testID, false, Denied, "AH01640", ""},
		{"group: an ID without a name", ProvFileGroup, "alice", "/www/ghost.html", testOwners, nil, testID, false, Denied, "AH01641", ""},

		{"dbm: no user", ProvDBMFileGroup, "", "/www/ops.html", testOwners, dbmLayers, testDBMID, false, DeniedNoUser, "", ""},
		{"dbm: a member", ProvDBMFileGroup, "bob", "/www/ops.html", testOwners, dbmLayers, testDBMID, false, Granted, "", ""},
		{"dbm: user:realm first", ProvDBMFileGroup, "alice", "/www/staff.html", testOwners, dbmLayers, testDBMID, false, Granted, "", ""},
		{"dbm: with case", ProvDBMFileGroup, "alice", "/www/ops.html", testOwners, dbmLayers, testDBMID, false, Denied, "AH01805", ""},
		{"dbm: with case, the other way", ProvDBMFileGroup, "bob", "/www/Ops.html", testOwners, dbmLayers, testDBMID, false, Denied, "AH01805", ""},
		{"dbm: a record without groups", ProvDBMFileGroup, "carol", "/www/ops.html", testOwners, dbmLayers, testDBMID, false, Denied, "AH01805", ""},
		{"dbm: not in the file", ProvDBMFileGroup, "dave", "/www/ops.html", testOwners, dbmLayers, testDBMID, false, Denied, "AH01804", "/etc/groups.dbm"},
		{"dbm: no group file", ProvDBMFileGroup, "bob", "/www/ops.html", testOwners, &Layers{}, testDBMID, false, Denied, "AH01802", ""},
		{"dbm: no layers", ProvDBMFileGroup, "bob", "/www/ops.html", testOwners, nil, testDBMID, false, Denied, "AH01802", ""},
		{"dbm: file unreadable", ProvDBMFileGroup, "bob", "/www/ops.html", testOwners, &Layers{DBMGroupFile: "/etc/broken.dbm", DBMGroupType: "SDBM"}, testDBMID, false, Denied, "", ""},
		{"dbm: no DBM Identity", ProvDBMFileGroup, "bob", "/www/ops.html", testOwners, dbmLayers, testID, false, Denied, "", ""},
		{"dbm: no file", ProvDBMFileGroup, "bob", "/www/missing.html", testOwners, dbmLayers, testDBMID, false, Denied, "AH01639 AH01805", ""},
	} {
		groupFile := "groups"
		if tc.noGroups {
			groupFile = ""
		}
		c := &evalCtx{req: &Request{URI: "/u", Filename: tc.file, Owners: tc.owners}, id: tc.id, groupFile: groupFile, layers: tc.l, user: tc.user, hasUser: tc.user != ""}
		got, _ := leaf("o", tc.p).leafResult(c)
		var codes []string
		for _, l := range c.ownerLogs[:c.nowner] {
			codes = append(codes, l.Code)
		}
		if got != tc.want || strings.Join(codes, " ") != tc.logs {
			t.Errorf("%s: %v, logs %q; want %v, %q", tc.name, got, codes, tc.want, tc.logs)
			continue
		}
		wantErr := strings.HasPrefix(tc.name, "dbm: file unreadable") || strings.HasPrefix(tc.name, "dbm: no DBM Identity")
		if c.dbmErr != wantErr {
			t.Errorf("%s: DBM error flag %v", tc.name, c.dbmErr)
		}
		if c.nowner > 0 {
			l := c.ownerLogs[c.nowner-1]
			if l.Reason != tc.reason || l.User != tc.user || l.Subject != "/u" {
				t.Errorf("%s: log %+v, want reason %q", tc.name, l, tc.reason)
			}
		}
	}
}

// TestFileOwnerDecide: file-owner through Decide: a user who does not own
// the file is refused with 401 and the lines Apache logs (mod_authz_owner's,
// then mod_authz_core's AH01631), a user who does is let in, a request
// without credentials is challenged before the file is looked at; the
// log lines read as Apache's; the leaves render as written.
func TestFileOwnerDecide(t *testing.T) {
	asked := 0
	owners := testOwners
	owners.asked = &asked
	l := &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users",
		Authz: anyOf(leaf("o", ProvFileOwner)).Compile(), Default: &Rule{ID: "def"}}
	req := func(cr Credentials, file string) *Request {
		return &Request{URI: "/x", Filename: file, Auth: cr, Owners: owners}
	}
	if d := Decide(l, req(Credentials{}, "/www/alice.html"), testID, nil); d.Status != 401 || d.Realm != "R" || asked != 0 {
		t.Errorf("no credentials: %d realm %q, %d lookups", d.Status, d.Realm, asked)
	}
	if d := Decide(l, req(alice, "/www/alice.html"), testID, nil); d.Status != 0 || d.User != "alice" {
		t.Errorf("the owner: %d", d.Status)
	}
	d := Decide(l, req(alice, "/www/bob.html"), testID, nil)
	if d.Status != 401 || logCodes(&d) != "AH01637 AH01631" {
		t.Fatalf("another's file: %d, logs %q", d.Status, logCodes(&d))
	}
	if got, want := d.Logs()[0].Message(), "Authorization of user alice to access /x failed, reason: file owner bob does not match."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if d.Logs()[0].Module != "authz_owner" {
		t.Errorf("module %q", d.Logs()[0].Module)
	}
	for _, tc := range []struct {
		l    LogLine
		want string
	}{
		{LogLine{Code: "AH01633", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: no filename available"},
		{LogLine{Code: "AH01638", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: no filename available"},
		{LogLine{Code: "AH01634", User: "u", Subject: "/x", Reason: "/f"}, "Authorization of user u to access /x failed, reason: could not stat file /f"},
		{LogLine{Code: "AH01639", User: "u", Subject: "/x", Reason: "/f"}, "Authorization of user u to access /x failed, reason: could not stat file /f"},
		{LogLine{Code: "AH01635", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: no file owner information available"},
		{LogLine{Code: "AH01640", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: no file group information available"},
		{LogLine{Code: "AH01636", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: could not get name of file owner"},
		{LogLine{Code: "AH01641", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: could not get name of file group"},
		{LogLine{Code: "AH01637", User: "u", Subject: "/x", Reason: "bob"}, "Authorization of user u to access /x failed, reason: file owner bob does not match."},
		{LogLine{Code: "AH01668"}, "No group file was specified in the configuration"},
		{LogLine{Code: "AH01802"}, "No group file was specified in the configuration"},
		{LogLine{Code: "AH01669", Reason: "/g"}, "Could not open group file: /g"},
		{LogLine{Code: "AH01670", User: "u", Subject: "/x", Reason: "/g"}, "Authorization of user u to access /x failed, reason: user doesn't appear in group file (/g)."},
		{LogLine{Code: "AH01804", User: "u", Subject: "/x", Reason: "/g"}, "Authorization of user u to access /x failed, reason: user doesn't appear in DBM group file (/g)."},
		{LogLine{Code: "AH01671", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: user is not part of the 'require'ed file group."},
		{LogLine{Code: "AH01805", User: "u", Subject: "/x"}, "Authorization of user u to access /x failed, reason: user is not part of the 'require'ed group(s)."},
	} {
		if got := tc.l.Message(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.l.Code, got, tc.want)
		}
	}
	for _, m := range []struct{ code, module string }{{"AH01668", "authz_groupfile"}, {"AH01671", "authz_groupfile"}, {"AH01805", "authz_dbm"}, {"AH01639", "authz_owner"}} {
		if got := ownerModule(m.code); got != m.module {
			t.Errorf("ownerModule(%s) = %q, want %q", m.code, got, m.module)
		}
	}
	c := &evalCtx{req: &Request{URI: "/u", Filename: "/www/ops.html", Owners: testOwners}, id: testID, groupFile: "groups", user: "bob", hasUser: true}
	if leaf("g", ProvFileGroup).leafResult(c); c.ownerLogs[0].Level != "debug" {
		t.Errorf("AH01671 at level %q, want debug", c.ownerLogs[0].Level)
	}
	for n, want := range map[*Node]string{
		leaf("o", ProvFileOwner):                   "Require file-owner",
		leaf("o", ProvFileOwner, "ignored", "x y"): `Require file-owner ignored "x y"`,
		not(leaf("g", ProvFileGroup)):              "Require not file-group",
		leaf("d", ProvDBMFileGroup):                "Require dbm-file-group",
	} {
		if got := leafText("", n); got != want {
			t.Errorf("rendered %q, want %q", got, want)
		}
	}
	// More lines than the context keeps are dropped, not a panic.
	c = &evalCtx{req: &Request{URI: "/u"}, user: "bob", hasUser: true}
	for range len(c.ownerLogs) + 2 {
		leaf("o", ProvFileOwner).leafResult(c)
	}
	if int(c.nowner) != len(c.ownerLogs) {
		t.Errorf("%d lines kept", c.nowner)
	}
}

// Deciding file-owner and file-group allocates nothing, refusals and their
// log lines included.
func TestFileOwnerNoAllocs(t *testing.T) {
	owners, id := FileOwners(testOwners), Identity(testID)
	for _, tc := range []struct {
		p    Provider
		file string
	}{
		{ProvFileOwner, "/www/bob.html"}, {ProvFileOwner, "/www/alice.html"}, {ProvFileOwner, "/www/missing.html"},
		{ProvFileGroup, "/www/ops.html"}, {ProvFileGroup, "/www/guests.html"}, {ProvFileGroup, "/www/ghost.html"},
	} {
		l := &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users", GroupFile: "groups",
			Authz: anyOf(leaf("o", tc.p)).Compile(), Default: &Rule{ID: "def"}}
		r := &Request{URI: "/x", Filename: tc.file, Auth: alice, Owners: owners, Dry: true}
		if n := testing.AllocsPerRun(100, func() { Decide(l, r, id, nil) }); n != 0 {
			t.Errorf("%v %s: %.1f allocations", tc.p, tc.file, n)
		}
	}
}
