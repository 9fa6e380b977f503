package policy

import (
	"errors"
	"testing"
)

// dbmIdentity is a fakeIdentity that also reads DBM files: each file has
// its own users, and a file named "broken" cannot be opened.
type dbmIdentity struct {
	fakeIdentity
	files  map[string]map[string]string
	groups map[string][]string // "file/type/key": the groups
}

func (f dbmIdentity) CheckDBMPassword(file, dbmType, user, password string) (PasswordResult, error) {
	users, ok := f.files[file+"/"+dbmType]
	if !ok {
		return 0, errors.New("cannot open")
	}
	pw, ok := users[user]
	switch {
	case !ok:
		return UserNotFound, nil
	case pw != password:
		return PasswordMismatch, nil
	}
	return PasswordOK, nil
}

func (f dbmIdentity) DBMGroupsRealm(file, dbmType, user, realm string) ([]string, bool, error) {
	g, ok := f.groups[file+"/"+dbmType+"/"+user+":"+realm]
	if !ok {
		g, ok = f.groups[file+"/"+dbmType+"/"+user]
	}
	if file == "/etc/broken.dbm" {
		return nil, false, errors.New("cannot open")
	}
	return g, ok, nil
}

var testDBMID = dbmIdentity{
	fakeIdentity: testID,
	files: map[string]map[string]string{
		"/etc/users.dbm/default": {"carol": "letmein", "alice": "other"},
		"/etc/staff.dbm/SDBM":    {"dave": "passw0rd"},
	},
	groups: map[string][]string{
		"/etc/groups.dbm/SDBM/alice:Staff area": {"staff", "Ops"},
		"/etc/groups.dbm/SDBM/alice":            {"everyone"},
		"/etc/groups.dbm/SDBM/bob":              {"guests", "ops"},
		"/etc/groups.dbm/SDBM/carol":            {},
	},
}

func TestCheckAnonymous(t *testing.T) {
	listed := &Anonymous{Users: []string{"guest", "Anonymous"}, MustEmail: true}
	verify := &Anonymous{Users: []string{"guest"}, MustEmail: true, VerifyEmail: true}
	open := &Anonymous{Any: true, NoUserID: true}
	noID := &Anonymous{Users: []string{"guest"}, NoUserID: true}
	onlyNoID := &Anonymous{NoUserID: true}
	for _, tc := range []struct {
		name     string
		a        *Anonymous
		user, pw string
		want     authnResult
	}{
		{"not configured", nil, "guest", "x", authnUserNotFound},
		{"no user IDs, NoUserId alone", onlyNoID, "", "x", authnUserNotFound},
		{"listed", listed, "guest", "x", authnGranted},
		{"listed, other case", listed, "GUEST", "x", authnGranted},
		{"second of the list", listed, "anonymous", "x", authnGranted},
		{"listed, no password", listed, "guest", "", authnDenied},
		{"not listed", listed, "visitor", "x", authnUserNotFound},
		{"longer name", listed, "guests", "x", authnUserNotFound},
		{"empty ID without NoUserId", listed, "", "x", authnUserNotFound},
		{"empty ID with NoUserId", noID, "", "x", authnGranted},
		{"e-mail", verify, "guest", "me@example.org", authnGranted},
		{"no dot", verify, "guest", "me@example", authnDenied},
		{"no at", verify, "guest", "me.example.org", authnDenied},
		{"any ID, no password needed", open, "whoever", "", authnGranted},
		{"any ID, empty ID", open, "", "", authnGranted},
	} {
		if got := checkAnonymous(tc.a, tc.user, tc.pw); got != tc.want {
			t.Errorf("%s: checkAnonymous(%q, %q) = %d, want %d", tc.name, tc.user, tc.pw, got, tc.want)
		}
	}
}

// TestProviderChain decides requests under AuthBasicProvider lists: each
// provider is asked in turn until one knows the user, and the first
// answer other than "not found" stands (authenticate_basic_user).
func TestProviderChain(t *testing.T) {
	file := AuthnProvider{Name: "file", Kind: ProviderFile, File: "/etc/users"}
	dbm := AuthnProvider{Name: "dbm", Kind: ProviderDBM, File: "/etc/users.dbm", DBMType: "default"}
	staff := AuthnProvider{Name: "staff", Kind: ProviderDBM, File: "/etc/staff.dbm", DBMType: "SDBM"}
	broken := AuthnProvider{Name: "dbm", Kind: ProviderDBM, File: "/etc/missing.dbm", DBMType: "default"}
	noDBMFile := AuthnProvider{Name: "dbm", Kind: ProviderDBM, DBMType: "default"}
	noFile := AuthnProvider{Name: "file", Kind: ProviderFile}
	anon := AuthnProvider{Name: "anon", Kind: ProviderAnon, Anon: &Anonymous{Users: []string{"guest"}, MustEmail: true}}
	type want struct {
		status int
		user   string
		code   string // the last log line's code
	}
	for _, tc := range []struct {
		name          string
		providers     []AuthnProvider
		notAuth, v22  bool
		id            Identity
		user, pw      string
		want          want
		wantLogSubj   string
		wantLogModule string
	}{
		{name: "default file provider", providers: nil, user: "alice", pw: "wonderland", want: want{0, "alice", ""}},
		{name: "file then dbm: found in dbm", providers: []AuthnProvider{file, dbm}, user: "carol", pw: "letmein", want: want{0, "carol", ""}},
		{name: "file then dbm: mismatch in file stands", providers: []AuthnProvider{file, dbm}, user: "alice", pw: "other", want: want{401, "", "AH01617"}},
		{name: "dbm then file: mismatch in dbm stands", providers: []AuthnProvider{dbm, file}, user: "alice", pw: "wonderland", want: want{401, "", "AH01617"}},
		{name: "three providers: the last knows", providers: []AuthnProvider{file, dbm, staff}, user: "dave", pw: "passw0rd", want: want{0, "dave", ""}},
		{name: "nobody knows", providers: []AuthnProvider{file, dbm, staff}, user: "zed", pw: "x", want: want{401, "", "AH01618"}},
		{name: "anon after file", providers: []AuthnProvider{file, anon}, user: "guest", pw: "x", want: want{0, "guest", ""}},
		{name: "anon refuses an empty password", providers: []AuthnProvider{anon, file}, user: "guest", pw: "", want: want{401, "", "AH01617"}},
		{name: "an unreadable dbm file", providers: []AuthnProvider{broken, file}, user: "alice", pw: "wonderland", want: want{500, "", "AH10285"}, wantLogSubj: "/etc/missing.dbm", wantLogModule: "authn_dbm"},
		{name: "an error after a not found", providers: []AuthnProvider{file, broken}, user: "zed", pw: "x", want: want{500, "", "AH10285"}},
		{name: "no dbm file", providers: []AuthnProvider{noDBMFile}, user: "alice", pw: "x", want: want{500, "", "AH10285"}},
		{name: "no password file", providers: []AuthnProvider{noFile}, user: "alice", pw: "x", want: want{500, "", "AH01619"}, wantLogModule: "authn_file"},
		{name: "an Identity without DBM", providers: []AuthnProvider{dbm}, id: testID, user: "carol", pw: "letmein", want: want{500, "", "AH10285"}},
		{name: "no Identity", providers: []AuthnProvider{file}, id: nilIdentity{}, user: "alice", pw: "wonderland", want: want{500, "", "AH01619"}},
		{name: "not authoritative, not found: 2.4", providers: []AuthnProvider{file, dbm}, notAuth: true, user: "zed", pw: "x", want: want{500, "", "AH01796"}},
		{name: "not authoritative, not found: 2.2", providers: []AuthnProvider{file, dbm}, notAuth: true, v22: true, user: "zed", pw: "x", want: want{401, "", "AH01618"}},
		{name: "not authoritative, an error: 2.4", providers: []AuthnProvider{broken}, notAuth: true, user: "alice", pw: "x", want: want{500, "", "AH01796"}},
		{name: "not authoritative, an error: 2.2", providers: []AuthnProvider{broken}, notAuth: true, v22: true, user: "alice", pw: "x", want: want{401, "", "AH01618"}},
		{name: "not authoritative, a mismatch", providers: []AuthnProvider{file}, notAuth: true, user: "alice", pw: "x", want: want{401, "", "AH01617"}},
		{name: "not authoritative, granted", providers: []AuthnProvider{file, dbm}, notAuth: true, user: "carol", pw: "letmein", want: want{0, "carol", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Layers{AuthType: "Basic", AuthName: "Realm", HasAuthName: true, UserFile: "/etc/users", Providers: tc.providers, BasicNotAuthoritative: tc.notAuth}
			var id Identity = testDBMID
			if tc.id != nil {
				id = tc.id
			}
			if _, ok := id.(nilIdentity); ok {
				id = nil
			}
			var d Decision
			cr := Credentials{Present: true, Basic: true, User: tc.user, Password: tc.pw}
			st := authenticateAs(l, &Request{URI: "/x"}, cr, id, &d, false, tc.v22)
			if st != tc.want.status || d.User != tc.want.user {
				t.Errorf("status %d user %q, want %d %q", st, d.User, tc.want.status, tc.want.user)
			}
			logs := d.Logs()
			code := ""
			if len(logs) > 0 {
				code = logs[len(logs)-1].Code
			}
			if code != tc.want.code {
				t.Errorf("log code %q, want %q (%v)", code, tc.want.code, logs)
			}
			if st == 401 && d.Realm != "Realm" {
				t.Errorf("a 401 with realm %q", d.Realm)
			}
			if st == 500 && d.Layer != LayerConfig {
				t.Errorf("a 500 in layer %v", d.Layer)
			}
			if st == 401 && d.Layer != LayerAuthn {
				t.Errorf("a 401 in layer %v", d.Layer)
			}
			if tc.wantLogSubj != "" && logs[len(logs)-1].Subject != tc.wantLogSubj {
				t.Errorf("log subject %q, want %q", logs[len(logs)-1].Subject, tc.wantLogSubj)
			}
			if tc.wantLogModule != "" && logs[len(logs)-1].Module != tc.wantLogModule {
				t.Errorf("log module %q, want %q", logs[len(logs)-1].Module, tc.wantLogModule)
			}
		})
	}
}

// nilIdentity marks a case decided with no Identity at all.
type nilIdentity struct{ fakeIdentity }

func TestDBMLogMessage(t *testing.T) {
	l := LogLine{Module: "authn_dbm", Code: "AH10285", User: "SDBM", Subject: "/etc/users.dbm"}
	if got, want := l.Message(), "could not open dbm (type SDBM) file: /etc/users.dbm"; got != want {
		t.Errorf("Message() = %q, want %q", got, want)
	}
	if d := DefaultAnonymous(); !d.MustEmail || !d.LogEmail || d.NoUserID || d.VerifyEmail || d.Any || d.Users != nil {
		t.Errorf("DefaultAnonymous() = %+v", d)
	}
}

// TestDBMGroup is Require dbm-group as dbmgroup_check_authorization
// decides it: the entry "user:realm" first, then "user"; names compared
// exactly; any named group grants.
func TestDBMGroup(t *testing.T) {
	withFile := &Layers{AuthName: "Staff area", DBMGroupFile: "/etc/groups.dbm", DBMGroupType: "SDBM"}
	broken := &Layers{DBMGroupFile: "/etc/broken.dbm", DBMGroupType: "SDBM"}
	for _, tc := range []struct {
		name   string
		l      *Layers
		id     Identity
		user   string
		noUser bool
		args   []string
		want   Result
		dbmErr bool
	}{
		{name: "no user", l: withFile, user: "", noUser: true, args: []string{"staff"}, want: DeniedNoUser},
		{name: "the realm's entry first", l: withFile, user: "alice", args: []string{"staff"}, want: Granted},
		{name: "the realm's entry hides the plain one", l: withFile, user: "alice", args: []string{"everyone"}, want: Denied},
		{name: "case counts", l: withFile, user: "alice", args: []string{"ops"}, want: Denied},
		{name: "the second name of the line", l: withFile, user: "alice", args: []string{"nope", "Ops"}, want: Granted},
		{name: "the plain entry without a realm entry", l: withFile, user: "bob", args: []string{"ops"}, want: Granted},
		{name: "no groups", l: withFile, user: "carol", args: []string{"ops"}, want: Denied},
		{name: "not in the file", l: withFile, user: "zed", args: []string{"ops"}, want: Denied},
		{name: "no group file", l: &Layers{}, user: "bob", args: []string{"ops"}, want: Denied},
		{name: "no layers", l: nil, user: "bob", args: []string{"ops"}, want: Denied},
		{name: "a file that cannot be opened", l: broken, user: "bob", args: []string{"ops"}, want: GeneralError, dbmErr: true},
		{name: "an Identity without DBM", l: withFile, id: testID, user: "bob", args: []string{"ops"}, want: GeneralError, dbmErr: true},
	} {
		var id Identity = testDBMID
		if tc.id != nil {
			id = tc.id
		}
		c := &evalCtx{req: &Request{}, id: id, layers: tc.l, user: tc.user, hasUser: !tc.noUser}
		n := leaf("g", ProvDBMGroup, tc.args...)
		if got, _ := n.leafResult(c); got != tc.want || c.dbmErr != tc.dbmErr {
			t.Errorf("%s: %v (error flag %v), want %v (%v)", tc.name, got, c.dbmErr, tc.want, tc.dbmErr)
		}
	}
}

// TestDBMGroupDecide: a DBM group file that cannot be opened is a 500
// with AH01799, and the rendered line reads as written.
func TestDBMGroupDecide(t *testing.T) {
	l := &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users",
		DBMGroupFile: "/etc/broken.dbm", DBMGroupType: "SDBM", Authz: anyOf(leaf("g", ProvDBMGroup, "ops")).Compile()}
	d := Decide(l, &Request{URI: "/x", Auth: Credentials{Present: true, Basic: true, User: "alice", Password: "wonderland"}}, testDBMID, nil)
	logs := d.Logs()
	if d.Status != 500 || len(logs) == 0 || logs[len(logs)-1].Code != "AH01799" {
		t.Fatalf("status %d logs %v, want 500 with AH01799", d.Status, logs)
	}
	if got, want := logs[len(logs)-1].Message(), "could not open dbm (type SDBM) group access file: /etc/broken.dbm"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	l.DBMGroupFile = "/etc/groups.dbm"
	if d := Decide(l, &Request{URI: "/x", Auth: Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}}, testDBMID, nil); d.Status != 0 {
		t.Errorf("bob in ops: %d, want granted", d.Status)
	}
	if got := leafText("", leaf("g", ProvDBMGroup, "ops", "staff")); got != "Require dbm-group ops staff" {
		t.Errorf("rendered %q", got)
	}
}

// equalFold is strcasecmp's equality (ASCII letters only), for group
// names and mod_authn_anon's user IDs.
func TestEqualFoldASCII(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"guest", "GUEST", true}, {"Guest", "gUEst", true}, {"guest", "guest", true},
		{"guest", "guesT ", false}, {"guest", "gues", false}, {"g", "h", false},
		{"@", "`", false}, {"[", "{", false}, {"é", "É", false}, {"Z", "z", true}, {"A", "a", true}, {"a", "A", true}, {"z", "Z", true}, {"a", "@", false}, {"@", "a", false},
	} {
		if got := equalFold(tc.a, tc.b); got != tc.want {
			t.Errorf("equalFold(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
