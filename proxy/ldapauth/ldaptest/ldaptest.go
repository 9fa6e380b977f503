// Package ldaptest runs a real OpenLDAP server (Debian's slapd) for tests:
// a private instance on a free port of 127.0.0.1, with a generated
// slapd.conf and an mdb database in the test's temporary directory,
// loaded with a fixed directory of users, groups, nested groups, a
// memberUid group, aliases and duplicate entries (see [Start] and
// testdata in this package's source). It also listens for LDAPS with a
// certificate of a CA it makes ([Server.CAFile]).
//
// [Require] skips the test when slapd is not installed, or fails it when
// the environment variable CI is "true": install the Debian packages
// slapd and ldap-utils. slapd is stopped by its pid when the test ends,
// never by name. No test sends traffic beyond 127.0.0.1.
package ldaptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Paths of Debian's slapd package.
const (
	Slapd   = "/usr/sbin/slapd"
	Slapadd = "/usr/sbin/slapadd"
	// ModulePath holds back_mdb.so, which Debian builds as a module.
	ModulePath = "/usr/lib/ldap"
	SchemaDir  = "/etc/ldap/schema"
)

// The directory's fixed names.
const (
	BaseDN       = "dc=example,dc=org"
	RootDN       = "cn=admin," + BaseDN
	RootPassword = "admin-secret"
	// SearchDN is a non-root account that may read everything: the
	// AuthLDAPBindDN of the tests.
	SearchDN       = "cn=search," + BaseDN
	SearchPassword = "search-secret"
	PeopleDN       = "ou=people," + BaseDN
	GroupsDN       = "ou=groups," + BaseDN
)

// Users are the user names (uid) of the directory and their passwords.
// "twin" exists twice (under ou=people and ou=others), "al" is an alias
// entry (in ou=aliases) for alice, and "we(ird)*" has filter
// metacharacters in its name.
var Users = map[string]string{
	"alice":    "alice-pw",
	"bob":      "bob-pw",
	"carol":    "carol-pw",
	"dave":     "dave-pw",
	"erin":     "erin-pw",
	"frank":    "frank-pw",
	"twin":     "twin-pw",
	"we(ird)*": "weird-pw",
}

// Group DNs. admins (groupOfNames) has alice; staff (groupOfUniqueNames)
// alice and bob; posix (posixGroup) has memberUid erin; top has mid, mid
// has inner and carol, inner has dave: dave is two levels below top.
const (
	Admins = "cn=admins," + GroupsDN
	Staff  = "cn=staff," + GroupsDN
	Posix  = "cn=posix," + GroupsDN
	Top    = "cn=top," + GroupsDN
	Mid    = "cn=mid," + GroupsDN
	Inner  = "cn=inner," + GroupsDN
	// PeopleAlias is an alias entry for ou=people.
	PeopleAlias = "ou=peoplealias," + BaseDN
	AliasesDN   = "ou=aliases," + BaseDN
)

// UserDN returns the DN of a user of ou=people.
func UserDN(uid string) string { return "uid=" + escapeRDN(uid) + "," + PeopleDN }

func escapeRDN(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(`,+"\<>;=`, v[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// A Server is a running slapd.
type Server struct {
	// URL is ldap://127.0.0.1:PORT, LDAPSURL ldaps://127.0.0.1:PORT.
	URL, LDAPSURL string
	// Addr and TLSAddr are the listeners' host:port.
	Addr, TLSAddr string
	Port, TLSPort int
	BaseDN        string
	// BindDN and BindPassword are the search account's.
	BindDN, BindPassword string
	// Passwords are the users' (a copy of Users).
	Passwords map[string]string
	// CAFile is the PEM file of the CA that signed the LDAPS certificate
	// (for the name 127.0.0.1 and localhost).
	CAFile string
	// Dir holds slapd.conf, the database and slapd.log.
	Dir string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Require fails the test under CI=true, and skips it otherwise, when
// slapd or its mdb backend is missing.
func Require(t testing.TB) {
	t.Helper()
	var missing []string
	for _, p := range []string{Slapd, Slapadd, filepath.Join(ModulePath, "back_mdb.so"), filepath.Join(SchemaDir, "inetorgperson.schema")} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("OpenLDAP slapd is not installed (missing %s): apt-get install slapd ldap-utils", strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Start runs slapd with the test directory and stops it when the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	// Searchable by all, for the CA file (the rest is private to its files).
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, BaseDN: BaseDN, BindDN: SearchDN, BindPassword: SearchPassword, Passwords: map[string]string{}}
	for u, p := range Users {
		s.Passwords[u] = p
	}
	if err := s.setup(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if s.Port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if s.TLSPort, err = freePort(); err != nil {
			t.Fatal(err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		s.TLSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.TLSPort))
		s.URL, s.LDAPSURL = "ldap://"+s.Addr, "ldaps://"+s.TLSAddr
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatal(err)
	return nil
}

// Stop stops slapd (SIGTERM to its pid, SIGKILL after 10 seconds).
// Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	cmd, done := s.cmd, s.done
	s.cmd = nil
	select {
	case <-done:
		return nil
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
	}
	cmd.Process.Kill()
	<-done
	return fmt.Errorf("ldaptest: slapd (pid %d) did not stop within 10s of SIGTERM; killed it", cmd.Process.Pid)
}

// Restart starts a stopped server again on the same ports and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// Log returns slapd's output.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "slapd.log"))
	return string(b)
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(s.Dir, "slapd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	// -d 0: stay in the foreground, as a child of the test.
	cmd := exec.Command(Slapd, "-d", "0", "-f", filepath.Join(s.Dir, "slapd.conf"),
		"-h", s.URL+"/ "+s.LDAPSURL+"/")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ldaptest: starting slapd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("ldaptest: slapd exited at start:\n%s", s.Log())
		default:
		}
		c1, err1 := net.DialTimeout("tcp", s.Addr, time.Second)
		c2, err2 := net.DialTimeout("tcp", s.TLSAddr, time.Second)
		if c1 != nil {
			c1.Close()
		}
		if c2 != nil {
			c2.Close()
		}
		if err1 == nil && err2 == nil {
			return nil
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			s.cmd = nil
			return fmt.Errorf("ldaptest: slapd not listening on %s and %s within 10s:\n%s", s.Addr, s.TLSAddr, s.Log())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// setup writes the certificates, slapd.conf and the database.
func (s *Server) setup() error {
	if err := s.writeCerts(); err != nil {
		return err
	}
	db := filepath.Join(s.Dir, "db")
	if err := os.MkdirAll(db, 0o700); err != nil {
		return err
	}
	conf := fmt.Sprintf(`include %[1]s/core.schema
include %[1]s/cosine.schema
include %[1]s/inetorgperson.schema
include %[1]s/nis.schema
modulepath %[2]s
moduleload back_mdb
pidfile %[3]s/slapd.pid
argsfile %[3]s/slapd.args
loglevel none
TLSCACertificateFile %[3]s/ca.pem
TLSCertificateFile %[3]s/server.pem
TLSCertificateKeyFile %[3]s/server.key
database mdb
maxsize 16777216
suffix "%[4]s"
rootdn "%[5]s"
rootpw %[6]s
directory %[7]s
access to attrs=userPassword
	by self read
	by anonymous auth
	by * none
access to *
	by * read
`, SchemaDir, ModulePath, s.Dir, BaseDN, RootDN, RootPassword, db)
	confPath := filepath.Join(s.Dir, "slapd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return err
	}
	ldif := filepath.Join(s.Dir, "data.ldif")
	if err := os.WriteFile(ldif, []byte(directory()), 0o600); err != nil {
		return err
	}
	out, err := exec.Command(Slapadd, "-q", "-f", confPath, "-l", ldif).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ldaptest: slapadd: %v\n%s", err, out)
	}
	return nil
}

// directory returns the LDIF of the test directory. Passwords are stored
// in the clear: slapd compares them as given.
func directory() string {
	var b strings.Builder
	add := func(dn string, lines ...string) {
		fmt.Fprintf(&b, "dn: %s\n", dn)
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	add(BaseDN, "objectClass: dcObject", "objectClass: organization", "dc: example", "o: Example")
	add(SearchDN, "objectClass: organizationalRole", "objectClass: simpleSecurityObject", "cn: search", "userPassword: "+SearchPassword)
	add(PeopleDN, "objectClass: organizationalUnit", "ou: people")
	add("ou=others,"+BaseDN, "objectClass: organizationalUnit", "ou: others")
	add(GroupsDN, "objectClass: organizationalUnit", "ou: groups")
	add(AliasesDN, "objectClass: organizationalUnit", "ou: aliases")
	person := func(dn, uid, cn string, extra ...string) {
		lines := []string{"objectClass: inetOrgPerson", "uid: " + uid, "cn: " + cn, "sn: " + cn, "userPassword: " + Users[uid]}
		add(dn, append(lines, extra...)...)
	}
	person(UserDN("alice"), "alice", "Alice Adams", "employeeType: staff", "departmentNumber: 42", "mail: alice@example.org")
	person(UserDN("bob"), "bob", "Bob Brown", "employeeType: contractor", "departmentNumber: 7")
	person(UserDN("carol"), "carol", "Carol Clark")
	person(UserDN("dave"), "dave", "Dave Davis")
	person(UserDN("erin"), "erin", "Erin Evans")
	person(UserDN("frank"), "frank", "Frank Fox", "employeeType: staff")
	person(UserDN("twin"), "twin", "Twin One")
	person("uid=twin,ou=others,"+BaseDN, "twin", "Twin Two")
	person(UserDN("we(ird)*"), "we(ird)*", "Weird Name")
	add(Admins, "objectClass: groupOfNames", "cn: admins", "member: "+UserDN("alice"))
	add(Staff, "objectClass: groupOfUniqueNames", "cn: staff", "uniqueMember: "+UserDN("alice"), "uniqueMember: "+UserDN("bob"))
	add(Posix, "objectClass: posixGroup", "cn: posix", "gidNumber: 5000", "memberUid: erin")
	add(Inner, "objectClass: groupOfNames", "cn: inner", "member: "+UserDN("dave"))
	add(Mid, "objectClass: groupOfNames", "cn: mid", "member: "+Inner, "member: "+UserDN("carol"))
	add(Top, "objectClass: groupOfNames", "cn: top", "member: "+Mid)
	add(PeopleAlias, "objectClass: alias", "objectClass: extensibleObject", "ou: peoplealias", "aliasedObjectName: "+PeopleDN)
	add("uid=al,"+AliasesDN, "objectClass: alias", "objectClass: extensibleObject", "uid: al", "aliasedObjectName: "+UserDN("alice"))
	return b.String()
}

// writeCerts makes a CA and a server certificate for 127.0.0.1.
func (s *Server) writeCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ldaptest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	s.CAFile = filepath.Join(s.Dir, "ca.pem")
	files := map[string][]byte{
		"ca.pem":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"server.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"server.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	for name, b := range files {
		mode := os.FileMode(0o600)
		if name == "ca.pem" {
			// Apache's children (www-data) read it.
			mode = 0o644
		}
		if err := os.WriteFile(filepath.Join(s.Dir, name), b, mode); err != nil {
			return err
		}
		if err := os.Chmod(filepath.Join(s.Dir, name), mode); err != nil {
			return err
		}
	}
	return nil
}
