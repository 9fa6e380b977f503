package authfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/digest"
)

// TestDBMRealmHash reads an AuthDBMUserFile made by httxt2dbm as
// get_dbm_realm_hash of mod_authn_dbm reads it for Digest: the key
// "user:realm", the value up to its first ':' (the rest, groups or a
// comment, left), case-sensitively; a record without the realm, or a
// Basic user's record, is not found. Corpus 967 holds the same rules to
// Apache 2.4.
func TestDBMRealmHash(t *testing.T) {
	httxt2dbm := needTool(t, "httxt2dbm")
	dir := t.TempDir()
	alice, bob := digest.HA1("alice", "dbm", "secret"), digest.HA1("bob", "dbm", "builder")
	text := "alice:dbm " + alice + "\n" +
		"bob:dbm " + bob + ":staff,ops:Bob\n" +
		"carol:other " + digest.HA1("carol", "other", "x") + "\n" +
		"dave " + secretHashes["apr1"] + "\n" +
		"erin:dbm :comment\n" +
		"frank:dbm NOT-A-HASH\n"
	txt, db := filepath.Join(dir, "users.txt"), filepath.Join(dir, "users")
	if err := os.WriteFile(txt, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, httxt2dbm, "-f", "SDBM", "-i", txt, "-o", db)
	id := NewIdentity()
	id.Map = func(p string) string { return filepath.Join(dir, p) }
	for _, tt := range []struct {
		user, realm string
		hash        string
		found       bool
	}{
		{"alice", "dbm", alice, true},
		{"bob", "dbm", bob, true},
		{"carol", "other", digest.HA1("carol", "other", "x"), true},
		{"carol", "dbm", "", false},
		{"Alice", "dbm", "", false},
		{"alice", "DBM", "", false},
		{"dave", "dbm", "", false},
		{"dave", "", "", false},
		{"erin", "dbm", "", true},
		{"frank", "dbm", "NOT-A-HASH", true},
		{"nobody", "dbm", "", false},
	} {
		hash, found, err := id.DBMRealmHash("users", "SDBM", tt.user, tt.realm)
		if err != nil || hash != tt.hash || found != tt.found {
			t.Errorf("DBMRealmHash(%q, %q) = %q, %v, %v; want %q, %v", tt.user, tt.realm, hash, found, err, tt.hash, tt.found)
		}
	}
	h, err := id.store.DBMHashes(db, "sdbm")
	if err != nil || h.Len() != 6 {
		t.Fatalf("DBMHashes = %v, %v; want 6 records", h, err)
	}
}

// TestDBMHashesNUL: a value is read up to its first NUL, then its first
// ':'; a key with a NUL byte, which no lookup can name, is left out and
// reported.
func TestDBMHashesNUL(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "users")
	pag, d := buildSDBM(t, false, [][2]string{
		{"alice:r", "abc\x00def:x"},
		{"bob:r", "ghi:jk\x00l"},
		{"carol\x00:r", "mno"},
	})
	if err := os.WriteFile(base+".pag", pag, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".dir", d, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := testStore()
	var loadErrs []error
	s.OnLoad = func(_ string, errs []error) { loadErrs = append(loadErrs, errs...) }
	h, err := s.DBMHashes(base, "SDBM")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ user, hash string }{{"alice", "abc"}, {"bob", "ghi"}} {
		if got, ok := h.RealmHash(tt.user, "r"); !ok || got != tt.hash {
			t.Errorf("RealmHash(%q) = %q, %v; want %q", tt.user, got, ok, tt.hash)
		}
	}
	if _, ok := h.RealmHash("carol", "r"); ok {
		t.Error("a key cut at its NUL was found")
	}
	var re *RecordError
	if len(loadErrs) != 1 || !errors.As(loadErrs[0], &re) || re.Key != "carol\x00:r" {
		t.Errorf("OnLoad errors %v, want the key with a NUL", loadErrs)
	}
}

// TestDigestDBMLookup: the dbm provider of AuthDigestProvider, alone and
// in a list with file: a user the DBM file does not know passes to the
// next provider, one it knows decides; a file that cannot be opened is
// mod_authn_dbm's error (AH10285, AH10284 for an unknown type), which
// Apache answers with 500.
func TestDigestDBMLookup(t *testing.T) {
	httxt2dbm := needTool(t, "httxt2dbm")
	htdbm := needTool(t, "htdbm")
	dir := t.TempDir()
	txt := filepath.Join(dir, "users.txt")
	alice := digest.HA1("alice", "r", "secret")
	if err := os.WriteFile(txt, []byte("alice:r "+alice+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, httxt2dbm, "-f", "SDBM", "-i", txt, "-o", filepath.Join(dir, "users"))
	run(t, htdbm, "-c", "-b", "-TDB", filepath.Join(dir, "users.db"), "alice", "secret")
	if err := os.WriteFile(filepath.Join(dir, "digest"), []byte("bob:r:"+digest.HA1("bob", "r", "b")+"\nalice:r:other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := NewIdentity()
	id.Map = func(p string) string { return filepath.Join(dir, p) }
	dbm := func(file, typ string) policy.AuthnProvider {
		return policy.AuthnProvider{Name: "dbm", Kind: policy.ProviderDBM, File: file, DBMType: typ}
	}
	file := policy.AuthnProvider{Name: "file", Kind: policy.ProviderFile, File: "digest"}
	for _, tt := range []struct {
		name      string
		providers []policy.AuthnProvider
		user      string
		hash      string
		found     bool
		code      string // of the error; "" none
		msg       string // in the error
	}{
		{"dbm", []policy.AuthnProvider{dbm("users", "SDBM")}, "alice", alice, true, "", ""},
		{"dbm not found", []policy.AuthnProvider{dbm("users", "SDBM")}, "bob", "", false, "", ""},
		{"dbm then file", []policy.AuthnProvider{dbm("users", "SDBM"), file}, "bob", digest.HA1("bob", "r", "b"), true, "", ""},
		{"dbm first decides", []policy.AuthnProvider{dbm("users", "SDBM"), file}, "alice", alice, true, "", ""},
		{"file first decides", []policy.AuthnProvider{file, dbm("users", "SDBM")}, "alice", "other", true, "", ""},
		{"no file", []policy.AuthnProvider{dbm("", "default")}, "alice", "", false, "AH10285", "could not open dbm (type default) file: : AuthDBMUserFile not set"},
		{"missing", []policy.AuthnProvider{dbm("missing", "SDBM")}, "alice", "", false, "AH10285", "could not open dbm (type SDBM) file: missing"},
		{"Berkeley DB", []policy.AuthnProvider{dbm("users.db", "default")}, "alice", "", false, "AH10285", "a Berkeley DB hash database"},
		{"unknown type", []policy.AuthnProvider{dbm("users", "foo")}, "alice", "", false, "AH10284", "could not load 'foo' dbm library"},
		{"error stops the list", []policy.AuthnProvider{dbm("missing", "SDBM"), file}, "bob", "", false, "AH10285", ""},
	} {
		hash, found, err := id.digestLookup(&policy.DigestScope{Providers: tt.providers})(tt.user, "r")
		var pe *digest.ProviderError
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%s: error %v", tt.name, err)
		case tt.code != "" && (!errors.As(err, &pe) || pe.Code != tt.code || !strings.Contains(pe.Error(), tt.msg)):
			t.Errorf("%s: error %v, want %s with %q", tt.name, err, tt.code, tt.msg)
		case hash != tt.hash || found != tt.found:
			t.Errorf("%s: %q, %v; want %q, %v", tt.name, hash, found, tt.hash, tt.found)
		}
	}
}

// TestCheckDBMFile: orderly serve refuses at load a DBM file of a type it
// does not read (DB, GDBM, NDBM, default = DB) that is there, read
// through the path map, with the message of the request-time error;
// not an SDBM file, a file not there (Apache answers 500 while it is
// missing), a type apr-util does not know, nor no file.
func TestCheckDBMFile(t *testing.T) {
	htdbm := needTool(t, "htdbm")
	dir := t.TempDir()
	run(t, htdbm, "-c", "-b", "-TDB", filepath.Join(dir, "users.db"), "alice", "secret")
	run(t, htdbm, "-c", "-b", "-TGDBM", filepath.Join(dir, "users.gdbm"), "alice", "secret")
	run(t, htdbm, "-c", "-b", "-TSDBM", filepath.Join(dir, "users"), "alice", "secret")
	id := NewIdentity()
	id.Map = func(p string) string { return filepath.Join(dir, strings.TrimPrefix(p, "/srv/")) }
	for _, tt := range []struct {
		file, typ string
		want      string // in the refusal; "" none
	}{
		{"/srv/users.db", "default", "a Berkeley DB hash database"},
		{"/srv/users.db", "", "AuthDBMType DB (or default, which is DB here)"},
		{"/srv/users.db", "DB", "db_dump -p " + filepath.Join(dir, "users.db")},
		{"/srv/users.gdbm", "GDBM", "a GDBM database"},
		{"/srv/users.gdbm", "default", "not of type DB"},
		{"/srv/users", "NDBM", "are an SDBM database: set AuthDBMType SDBM"},
		{"/srv/users", "SDBM", ""},
		{"/srv/users", "sdbm", ""},
		{"/srv/users.db", "SDBM", ""},
		{"/srv/missing", "DB", ""},
		{"/srv/users", "DB", ""},
		{"/srv/users.db", "foo", ""},
		{"", "DB", ""},
	} {
		err := id.CheckDBMFile(tt.file, tt.typ)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckDBMFile(%q, %q) = %v, want nil", tt.file, tt.typ, err)
		case tt.want != "" && (!errors.Is(err, ErrDBMUnsupported) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckDBMFile(%q, %q) = %v, want ErrDBMUnsupported with %q", tt.file, tt.typ, err, tt.want)
		}
	}
}
