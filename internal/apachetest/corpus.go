package apachetest

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// Names of a case's files and directories, and the placeholders replaced in
// its files (see testdata/corpus/README.md).
const (
	LegacyFile   = "legacy.conf"
	RequestsFile = "requests"
	ModulesFile  = "modules"
	// BackendFile, when a case has it, says why the backend keeps the
	// case's access rules: "keeps-access", then the reason.
	BackendFile = "backend"
	// SymlinkSuffix ends the name of a file that stands for a symbolic
	// link: its first line is the target, and a line "owner=USER" gives
	// the link to USER.
	SymlinkSuffix = "@symlink"
	// SDBMSuffix marks a file whose text (key:value lines) becomes an
	// SDBM database, NAME.pag and NAME.dir, made by Apache's httxt2dbm
	// (the text file is kept beside them).
	SDBMSuffix = "@sdbm"
	// DBSuffix marks a file whose text becomes a Berkeley DB database
	// NAME (httxt2dbm -f DB, Debian's default DBM type), as SDBMSuffix
	// does an SDBM one.
	DBSuffix = "@db"
	// OwnersFile gives files of the case to other users (owners).
	OwnersFile = "owners"
	DocRootDir = "docroot"
	AuthDir    = "auth"
	ExtraDir   = "extra"

	DocRootPlaceholder = "@DOCROOT@"
	AuthPlaceholder    = "@AUTH@"
	ExtraPlaceholder   = "@EXTRA@"
)

// A Case is one case of the differential corpus: a txtar archive holding a
// legacy configuration fragment, the files it protects and the requests to
// replay.
type Case struct {
	// Name is the file name without its directory and the .txtar suffix.
	Name string
	// Path is the file the case was read from.
	Path string
	// Comment is the archive's comment: what the case is about.
	Comment string
	// Legacy is legacy.conf, with its placeholders not yet replaced.
	Legacy []byte
	// Files are the files under docroot/, auth/ and extra/, in archive
	// order, with their placeholders not yet replaced. A name ending in "/"
	// stands for an empty directory, one ending in SymlinkSuffix for a
	// symbolic link.
	Files []txtar.File
	// Modules are the modules the case needs loaded beyond the harness's
	// own, by name ("autoindex"), from its modules file.
	Modules []string
	// Requests are the requests to replay, in order.
	Requests []Request
	// Hosts is the hosts file, if HasHosts: the /etc/hosts that Apache
	// and orderly read while the case runs (see [Namespace]).
	Hosts    []byte
	HasHosts bool
	// DNS holds the records of the dns file, which the case's DNS server
	// on 127.0.0.1:53 answers from.
	DNS []DNSRecord
	// Certs are the client certificates of the certs file (tls.go).
	Certs []CertSpec
	// BackendKeepsAccess says the backend runs the case with its access
	// rules (Backend), for rules whose effect reads them: a RewriteCond
	// -U or -F, which the backend evaluates again on what orderly
	// forwards. BackendWhy is the case's reason.
	BackendKeepsAccess bool
	BackendWhy         string
	// Owners are the lines of the owners file: the files that belong to
	// another user (and group) than the one running the test.
	Owners []Owner
}

// An Owner is a line of a case's owners file, "PATH USER[:GROUP]": the
// file or directory PATH of the case (docroot/..., auth/... or
// extra/...) belongs to USER, and to GROUP, or USER's group where no
// GROUP is given. A number is a user (group) ID, which need have no
// name. Giving a file away needs root.
type Owner struct {
	Path, User, Group string
	Line              int // in the case's file
}

// Backend is the case as the backend runs it: without its access rules
// (WithoutAccess), so that every refusal is orderly's own, unless the
// case says the backend keeps them. Either way the differential requires
// a refusal to be the front's own.
func (c *Case) Backend() *Case {
	if c.BackendKeepsAccess {
		return c
	}
	return c.WithoutAccess()
}

// LoadCorpus loads every *.txtar case in dir, sorted by file name. It
// reports the errors of all malformed cases at once, and an error if there
// is no case at all.
func LoadCorpus(dir string) ([]*Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("apachetest: no *.txtar case in %s", dir)
	}
	var cases []*Case
	var errs []error
	for _, name := range names { // Glob sorts its result
		c, err := LoadCase(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cases = append(cases, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cases, nil
}

// LoadCase reads and checks the case in the txtar file path. Errors name the
// file and, for the requests, the line in it.
func LoadCase(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCase(path, data)
}

// ParseCase parses a case from the contents of a txtar file; path is used
// for the case's name and in error messages.
func ParseCase(path string, data []byte) (*Case, error) {
	ar := txtar.Parse(data)
	c := &Case{
		Name:    strings.TrimSuffix(filepath.Base(path), ".txtar"),
		Path:    path,
		Comment: string(ar.Comment),
	}
	fail := func(format string, args ...any) (*Case, error) {
		return nil, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	seen := make(map[string]bool)
	var requests []byte
	var haveLegacy, haveRequests bool
	for _, f := range ar.Files {
		if seen[f.Name] {
			return fail("file %q appears twice", f.Name)
		}
		seen[f.Name] = true
		switch {
		case f.Name == LegacyFile:
			c.Legacy, haveLegacy = f.Data, true
		case f.Name == RequestsFile:
			requests, haveRequests = f.Data, true
		case f.Name == ModulesFile:
			for _, m := range strings.Fields(string(f.Data)) {
				if strings.ContainsAny(m, "/.\"") || strings.HasSuffix(m, "_module") {
					return fail("%s: bad module %q: want a name such as autoindex", ModulesFile, m)
				}
				c.Modules = append(c.Modules, m)
			}
		case f.Name == BackendFile:
			kw, why, _ := strings.Cut(strings.TrimSpace(string(f.Data)), " ")
			if kw != "keeps-access" || strings.TrimSpace(why) == "" {
				return fail("%s: want \"keeps-access\" and the reason the backend needs the access rules", BackendFile)
			}
			c.BackendKeepsAccess, c.BackendWhy = true, strings.TrimSpace(why)
		case f.Name == HostsFile:
			c.Hosts, c.HasHosts = f.Data, true
		case f.Name == DNSFile:
			recs, err := ParseDNS(path, sectionLine(data, DNSFile), f.Data)
			if err != nil {
				return nil, err
			}
			c.DNS = recs
		case f.Name == CertsFile:
			certs, err := ParseCerts(path, sectionLine(data, CertsFile), f.Data)
			if err != nil {
				return nil, err
			}
			c.Certs = certs
		case f.Name == OwnersFile:
			owners, err := parseOwners(path, sectionLine(data, OwnersFile), f.Data)
			if err != nil {
				return nil, err
			}
			c.Owners = owners
		default:
			top, rest, _ := strings.Cut(f.Name, "/")
			if top != DocRootDir && top != AuthDir && top != ExtraDir {
				return fail("unexpected file %q: want %s, %s, %s, %s, or a file under %s/, %s/ or %s/", f.Name, LegacyFile, RequestsFile, HostsFile, DNSFile, DocRootDir, AuthDir, ExtraDir)
			}
			rel := strings.TrimSuffix(rest, "/")
			if rel == "" || !filepath.IsLocal(rel) || filepath.Clean(rel) != rel {
				return fail("bad file name %q: want a clean relative path under %s/", f.Name, top)
			}
			if strings.HasSuffix(f.Name, "/") && len(bytes.TrimSpace(f.Data)) > 0 {
				return fail("%q names a directory (it ends in /) but has contents", f.Name)
			}
			if strings.HasSuffix(f.Name, SymlinkSuffix) {
				if _, _, err := symlinkSpec(f.Data); err != nil {
					return fail("%q: %v", f.Name, err)
				}
			}
			c.Files = append(c.Files, f)
		}
	}
	if !haveLegacy {
		return fail("no %s", LegacyFile)
	}
	if !haveRequests {
		return fail("no %s", RequestsFile)
	}
	reqs, err := ParseRequests(path, sectionLine(data, RequestsFile), requests)
	if err != nil {
		return nil, err
	}
	c.Requests = reqs
	if len(c.Requests) == 0 {
		return fail("%s has no request", RequestsFile)
	}
	if err := c.checkTLS(); err != nil {
		return nil, err
	}
	for _, o := range c.Owners {
		if !seen[o.Path] && !seen[o.Path+"/"] && !c.parentOfFile(o.Path) {
			return fail("%s:%d: %s is no file or directory of the case", OwnersFile, o.Line, o.Path)
		}
	}
	return c, nil
}

// parentOfFile reports whether dir is a directory of one of the case's
// files.
func (c *Case) parentOfFile(dir string) bool {
	for _, f := range c.Files {
		if strings.HasPrefix(f.Name, dir+"/") {
			return true
		}
	}
	return false
}

// parseOwners parses an owners file: "PATH USER[:GROUP]" lines, '#'
// comments and blank lines.
func parseOwners(name string, firstLine int, data []byte) ([]Owner, error) {
	var out []Owner
	var errs []error
	for i, text := range strings.Split(string(data), "\n") {
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		line := firstLine + i
		f := strings.Fields(text)
		if len(f) != 2 {
			errs = append(errs, fmt.Errorf("%s:%d: %q: want PATH USER[:GROUP]", name, line, text))
			continue
		}
		p := strings.TrimSuffix(f[0], "/")
		top, rest, _ := strings.Cut(p, "/")
		if top != DocRootDir && top != AuthDir && top != ExtraDir || rest == "" || !filepath.IsLocal(rest) || filepath.Clean(rest) != rest {
			errs = append(errs, fmt.Errorf("%s:%d: bad path %q: want a file or directory under %s/, %s/ or %s/", name, line, f[0], DocRootDir, AuthDir, ExtraDir))
			continue
		}
		u, g, _ := strings.Cut(f[1], ":")
		if u == "" {
			errs = append(errs, fmt.Errorf("%s:%d: %q: want USER[:GROUP]", name, line, f[1]))
			continue
		}
		out = append(out, Owner{Path: p, User: u, Group: g, Line: line})
	}
	return out, errors.Join(errs...)
}

// chown gives the file of o, under dir, to its user and group.
func (o Owner) chown(dir string) error {
	uid, gid, err := userIDs(o.User)
	if err != nil {
		return err
	}
	if o.Group != "" {
		if gid, err = groupID(o.Group); err != nil {
			return err
		}
	}
	name := filepath.Join(dir, filepath.FromSlash(o.Path))
	if err := os.Lchown(name, uid, gid); err != nil {
		return fmt.Errorf("giving %s to %s (which needs root): %v", name, o.User, err)
	}
	return nil
}

// userIDs returns the user ID and group ID of the user name, or of a
// number, which stands for itself and its own group ID (an ID no user
// has, for the checks of an owner without a name).
func userIDs(name string) (uid, gid int, err error) {
	if n, err := strconv.Atoi(name); err == nil {
		return n, n, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// groupID returns the ID of the group name, or the number it is.
func groupID(name string) (int, error) {
	if n, err := strconv.Atoi(name); err == nil {
		return n, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}

// sectionLine returns the line number, in a txtar file, of the first line of
// the named file's contents (1 if there is no such file).
func sectionLine(data []byte, name string) int {
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") && len(line) >= 6 &&
			strings.TrimSpace(line[3:len(line)-3]) == name {
			return i + 2
		}
	}
	return 1
}

// ParseRequests parses a requests file (see testdata/corpus/README.md):
//
//	METHOD TARGET CLIENT-IP [u=USER:PASSWORD | d=USER:PASSWORD] [h=Name:value]... [body=N] [proto=P] [want=CLASS]
//
// one request a line; lines starting with # and blank lines are ignored.
// name and firstLine (the line number of data's first line in name, 1 for
// a file of its own) locate errors, which read "name:line: message"; all
// malformed lines are reported at once.
func ParseRequests(name string, firstLine int, data []byte) ([]Request, error) {
	var reqs []Request
	var errs []error
	for i, text := range strings.Split(string(data), "\n") {
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		line := firstLine + i
		r, err := parseRequest(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %v", name, line, err))
			continue
		}
		r.Line = line
		reqs = append(reqs, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return reqs, nil
}

// parseRequest parses one non-comment request line.
func parseRequest(text string) (Request, error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		return Request{}, fmt.Errorf("%q: want METHOD TARGET CLIENT-IP [u=USER:PASSWORD] [h=Name:value]... [want=CLASS]", text)
	}
	r := Request{Method: f[0], Target: f[1], ClientIP: f[2], Text: text}
	if !isToken(r.Method) {
		return Request{}, fmt.Errorf("bad method %q", r.Method)
	}
	for _, ip := range strings.Split(r.ClientIP, ",") {
		if _, err := netip.ParseAddr(ip); err != nil {
			return Request{}, fmt.Errorf("bad client IP %q: want an IP address (or several, separated by commas)", r.ClientIP)
		}
	}
	for _, opt := range f[3:] {
		if ok, err := parseTLSOption(opt, &r); ok {
			if err != nil {
				return Request{}, err
			}
			continue
		}
		key, val, ok := strings.Cut(opt, "=")
		if !ok {
			return Request{}, fmt.Errorf("unexpected %q: want u=USER:PASSWORD, h=Name:value or want=CLASS", opt)
		}
		switch key {
		case "u", "d":
			if r.HasAuth {
				return Request{}, fmt.Errorf("%s= appears twice (u= and d= are one)", key)
			}
			user, pass, ok := strings.Cut(val, ":")
			if !ok {
				return Request{}, fmt.Errorf("bad %q: want %s=USER:PASSWORD", opt, key)
			}
			r.User, r.Password, r.HasAuth, r.Digest = user, pass, true, key == "d"
		case "h":
			hname, hval, ok := strings.Cut(val, ":")
			if !ok || !isToken(hname) {
				return Request{}, fmt.Errorf("bad %q: want h=Name:value (%%20 for a space)", opt)
			}
			r.Header = append(r.Header, [2]string{hname, strings.ReplaceAll(hval, "%20", " ")})
		case "body":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 || n > MaxRequestBody || r.Body != 0 {
				return Request{}, fmt.Errorf("bad %q: want body=N, 0 < N <= %d, once", opt, MaxRequestBody)
			}
			r.Body = n
		case "proto":
			if val == "" || r.Proto != "" || strings.ContainsAny(val, " \t") {
				return Request{}, fmt.Errorf("bad %q: want proto=PROTOCOL (HTTP/1.0), once", opt)
			}
			r.Proto = val
		case "want":
			if r.Want != "" {
				return Request{}, fmt.Errorf("want= appears twice")
			}
			if !validWant(val) {
				return Request{}, fmt.Errorf("bad %q: want a status code (200, 400, 401, 403, 404, 500, ...) or other", opt)
			}
			r.Want = val
		default:
			return Request{}, fmt.Errorf("unknown %q: want u=USER:PASSWORD, h=Name:value, body=N, proto=P or want=CLASS", opt)
		}
	}
	return r, nil
}

func validWant(s string) bool {
	if s == "other" || s == "tls" {
		return true
	}
	n, err := strconv.Atoi(s)
	return err == nil && len(s) == 3 && n >= 100 && n <= 599
}

// isToken reports whether s is an HTTP token (RFC 9110, section 5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// A Layout says where [Case.Materialize] wrote a case. All paths are
// absolute.
type Layout struct {
	Dir     string // the directory given to Materialize
	DocRoot string // Dir/docroot, replaces @DOCROOT@
	Auth    string // Dir/auth, replaces @AUTH@
	Extra   string // Dir/extra, replaces @EXTRA@
	Legacy  string // Dir/legacy.conf, with its placeholders replaced
	// Modules are the case's modules beyond the harness's (Case.Modules).
	Modules []string
	// TLS holds the certificates of a case that uses TLS (tls.go), whose
	// CA replaces @TLSCA@; nil for the others.
	TLS *TLSLayout
	// LDAP is the LDAP server of a case that names one (ldap.go), whose
	// addresses and accounts replace @LDAPURL@, @LDAPSURL@, @LDAPBASE@,
	// @LDAPBINDDN@ and @LDAPBINDPW@; nil for the others.
	LDAP *LDAPInfo
	// LDAPCA is Dir/ldap-ca.pem, the LDAP server's CA (LDAPInfo.CA),
	// which replaces @LDAPCA@; "" for a case without LDAP.
	LDAPCA string
}

// Expand replaces the placeholders @DOCROOT@, @AUTH@ and @EXTRA@ in data by
// the layout's directories (and @TLSCA@ and the LDAP ones by the case's
// CA and LDAP server).
func (l Layout) Expand(data []byte) []byte {
	ca := ""
	if l.TLS != nil {
		ca = l.TLS.CA
	}
	ldap := noLDAP
	if l.LDAP != nil {
		ldap = *l.LDAP
	}
	r := strings.NewReplacer(DocRootPlaceholder, l.DocRoot, AuthPlaceholder, l.Auth, ExtraPlaceholder, l.Extra, TLSCAPlaceholder, ca,
		LDAPURLPlaceholder, ldap.URL, LDAPSURLPlaceholder, ldap.SURL, LDAPCAPlaceholder, l.LDAPCA,
		LDAPBasePlaceholder, ldap.Base, LDAPBindDNPlaceholder, ldap.BindDN, LDAPBindPWPlaceholder, ldap.BindPassword)
	return []byte(r.Replace(string(data)))
}

// OracleOptions returns the options of the oracle for the case written at l:
// real Apache with mod_access_compat and mod_remoteip, the case's document
// root, and legacy.conf included.
func (l Layout) OracleOptions() Options {
	o := Options{
		DocumentRoot: l.DocRoot,
		Include:      []string{l.Legacy},
		RemoteIP:     true,
		AccessCompat: true,
		Modules:      l.Modules,
	}
	if l.TLS != nil {
		o.TLS = &TLSOptions{CertFile: l.TLS.CertFile, KeyFile: l.TLS.KeyFile}
	}
	return o
}

// Materialize writes the case into dir (created if needed): docroot/, auth/
// and extra/ (always created, even if empty) with the case's files, and
// legacy.conf, with the placeholders replaced by absolute paths. Names
// ending in "/" become empty directories. Everything, dir included, is made
// world-readable (directories 0755, files 0644), so that Apache's children
// can read it after switching to their unprivileged user.
func (c *Case) Materialize(dir string) (Layout, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Layout{}, err
	}
	l := Layout{
		Dir:     dir,
		DocRoot: filepath.Join(dir, DocRootDir),
		Auth:    filepath.Join(dir, AuthDir),
		Extra:   filepath.Join(dir, ExtraDir),
		Legacy:  filepath.Join(dir, LegacyFile),
		Modules: c.Modules,
	}
	mkdir := func(d string) error {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		return os.Chmod(d, 0o755)
	}
	for _, d := range []string{l.Dir, l.DocRoot, l.Auth, l.Extra} {
		if err := mkdir(d); err != nil {
			return Layout{}, err
		}
	}
	if l.TLS, err = c.materializeTLS(dir); err != nil {
		return Layout{}, fmt.Errorf("%s: %v", c.Path, err)
	}
	write := func(name string, data []byte) error {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
		return os.Chmod(name, 0o644)
	}
	if c.NeedsLDAP() {
		l.LDAP = currentLDAP()
		l.LDAPCA = filepath.Join(dir, "ldap-ca.pem")
		if err := write(l.LDAPCA, l.LDAP.CA); err != nil {
			return Layout{}, fmt.Errorf("%s: %v", c.Path, err)
		}
	}
	for _, f := range c.Files {
		name := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(f.Name, "/")))
		// Parent directories are made one by one, so that each gets 0755.
		rel, _ := filepath.Rel(dir, filepath.Dir(name))
		p := dir
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			if part == "." {
				continue
			}
			p = filepath.Join(p, part)
			if err := mkdir(p); err != nil {
				return Layout{}, fmt.Errorf("%s: %v", c.Path, err)
			}
		}
		switch {
		case strings.HasSuffix(f.Name, "/"):
			err = mkdir(name)
		case strings.HasSuffix(f.Name, SymlinkSuffix):
			err = symlink(strings.TrimSuffix(name, SymlinkSuffix), l.Expand(f.Data))
		case strings.HasSuffix(f.Name, SDBMSuffix):
			if err = write(name, l.Expand(f.Data)); err == nil {
				err = makeDBM(name, strings.TrimSuffix(name, SDBMSuffix), "SDBM")
			}
		case strings.HasSuffix(f.Name, DBSuffix):
			if err = write(name, l.Expand(f.Data)); err == nil {
				err = makeDBM(name, strings.TrimSuffix(name, DBSuffix), "DB")
			}
		default:
			err = write(name, l.Expand(f.Data))
		}
		if err != nil {
			return Layout{}, fmt.Errorf("%s: %v", c.Path, err)
		}
	}
	if err := write(l.Legacy, l.Expand(c.Legacy)); err != nil {
		return Layout{}, fmt.Errorf("%s: %v", c.Path, err)
	}
	for _, o := range c.Owners {
		if err := o.chown(dir); err != nil {
			return Layout{}, fmt.Errorf("%s:%d: %v", c.Path, o.Line, err)
		}
	}
	return l, nil
}

// makeDBM makes the DBM database out of the type typ (SDBM: out.pag and
// out.dir; DB: out) of the text file in with httxt2dbm, readable by all.
func makeDBM(in, out, typ string) error {
	tool := "/usr/sbin/httxt2dbm"
	if _, err := os.Stat(tool); err != nil {
		if tool, err = exec.LookPath("httxt2dbm"); err != nil {
			return fmt.Errorf("httxt2dbm (Debian's apache2-utils) is needed for %s: %v", in, err)
		}
	}
	if b, err := exec.Command(tool, "-f", typ, "-i", in, "-o", out).CombinedOutput(); err != nil {
		return fmt.Errorf("httxt2dbm -f %s -i %s: %v: %s", typ, in, err, b)
	}
	exts := []string{".pag", ".dir"}
	if typ != "SDBM" {
		exts = []string{""}
	}
	for _, ext := range exts {
		if err := os.Chmod(out+ext, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// symlinkSpec reads a symbolic link's file: the target on its first line,
// then optionally "owner=USER".
func symlinkSpec(data []byte) (target, owner string, err error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	target = strings.TrimSpace(lines[0])
	if target == "" {
		return "", "", errors.New("a symbolic link needs its target on its first line")
	}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "owner=") && owner == "" && len(l) > len("owner="):
			owner = l[len("owner="):]
		default:
			return "", "", fmt.Errorf("unexpected %q after the target: want owner=USER", l)
		}
	}
	return target, owner, nil
}

// symlink makes name a symbolic link as its file (data, placeholders
// replaced) says; giving it an owner needs root.
func symlink(name string, data []byte) error {
	target, owner, err := symlinkSpec(data)
	if err != nil {
		return err
	}
	if err := os.Symlink(target, name); err != nil {
		return err
	}
	if owner == "" {
		return nil
	}
	u, err := user.Lookup(owner)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Lchown(name, uid, gid); err != nil {
		return fmt.Errorf("giving %s to %s (which needs root): %v", name, owner, err)
	}
	return nil
}
