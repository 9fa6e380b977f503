package ldapauth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Version selects whose behaviour a Config follows.
type Version int

const (
	// Apache24 is mod_authnz_ldap of httpd 2.4: authorization by the
	// ldap-* providers of mod_authz_core ([Client.Authorize]).
	Apache24 Version = iota
	// Apache22 is mod_authnz_ldap of httpd 2.2: one auth_checker hook for
	// all ldap-* Require lines ([Client.Authorize22]), AuthzLDAPAuthoritative,
	// no nested groups.
	Apache22
)

// Deref is AuthLDAPDereferenceAliases (LDAP_DEREF_*, the wire values).
type Deref int

const (
	DerefNever     Deref = 0
	DerefSearching Deref = 1
	DerefFinding   Deref = 2
	DerefAlways    Deref = 3
)

func (d Deref) String() string {
	return [...]string{"never", "searching", "finding", "always"}[d&3]
}

// ParseDeref reads AuthLDAPDereferenceAliases' argument as
// mod_auth_ldap_set_deref does: "never", "searching", "finding", "always"
// case-sensitively, and "off"/"on" in any case for never/always.
func ParseDeref(s string) (Deref, error) {
	switch {
	case s == "never" || strings.EqualFold(s, "off"):
		return DerefNever, nil
	case s == "searching":
		return DerefSearching, nil
	case s == "finding":
		return DerefFinding, nil
	case s == "always" || strings.EqualFold(s, "on"):
		return DerefAlways, nil
	}
	return 0, errors.New("Unrecognized value for AuthLDAPDereferenceAliases directive")
}

// groupAttrMax is GROUPATTR_MAX_ELTS.
const groupAttrMax = 10

// Config is the per-directory configuration of mod_authnz_ldap
// (authn_ldap_config_t). Build it with [NewConfig] and [Config.Apply].
//
// mod_authnz_ldap has no merge function: a <Directory>, <Location> or
// .htaccess that uses any of its directives starts from the defaults and
// does not inherit the enclosing section's AuthLDAPURL, bind DN or other
// settings. A section that uses none of them keeps the enclosing one's.
type Config struct {
	Version Version

	// URL is the last AuthLDAPURL; nil when there is none, in which case
	// authentication is a general error and every ldap-* Require denies.
	URL *URL
	// Hosts is sec->host: the URL's host list, or "localhost". A second
	// AuthLDAPURL in the same section puts its hosts in front of the
	// earlier ones (and replaces everything else).
	Hosts string

	BindDN string
	// BindPassword is AuthLDAPBindPassword, after exec: has run. It is
	// never logged and never part of an error.
	BindPassword string
	// BindAuthoritative is AuthLDAPBindAuthoritative (default on): off
	// turns every failed authentication into "user not found", so that
	// the next AuthBasicProvider is asked.
	BindAuthoritative bool

	RemoteUserIsDN      bool
	RemoteUserAttribute string
	// CompareDNOnServer is AuthLDAPCompareDNOnServer. The manual says its
	// default is on, but create_authnz_ldap_dir_config sets it off, in 2.2
	// and 2.4 alike, and that is what Apache does: NewConfig follows the
	// code.
	CompareDNOnServer bool

	// GroupAttributes is AuthLDAPGroupAttribute; empty means the default,
	// member and uniqueMember ("uniquemember" in 2.2).
	GroupAttributes    []string
	GroupAttributeIsDN bool // default on

	// SubGroupAttributes is AuthLDAPSubGroupAttribute (default member,
	// uniqueMember); SubGroupClasses AuthLDAPSubGroupClass (default
	// groupOfNames, groupOfUniqueNames); MaxSubGroupDepth
	// AuthLDAPMaxSubGroupDepth (default 10; 0 checks no nested group).
	// 2.4 only.
	SubGroupAttributes []string
	SubGroupClasses    []string
	MaxSubGroupDepth   int

	Deref Deref // default always

	// 2.4: AuthLDAPInitialBindAsUser and AuthLDAPInitialBindPattern (a Go
	// regexp standing in for Apache's PCRE; Subst is ap_pregsub's
	// template: $0-$9 and &), AuthLDAPSearchAsUser, AuthLDAPCompareAsUser.
	InitialBindAsUser  bool
	InitialBindPattern *regexp.Regexp
	InitialBindSubst   string
	SearchAsUser       bool
	CompareAsUser      bool

	// AuthorizePrefix is AuthLDAPAuthorizePrefix (2.4; default
	// "AUTHORIZE_").
	AuthorizePrefix string

	// Authoritative is AuthzLDAPAuthoritative (2.2 only; default on).
	Authoritative bool
}

// NewConfig returns the defaults of create_authnz_ldap_dir_config.
func NewConfig(v Version) *Config {
	return &Config{
		Version:            v,
		BindAuthoritative:  true,
		GroupAttributeIsDN: true,
		MaxSubGroupDepth:   10,
		Deref:              DerefAlways,
		AuthorizePrefix:    "AUTHORIZE_",
		Authoritative:      true,
	}
}

// SetURL applies one AuthLDAPURL (mod_auth_ldap_parse_url): the URL's
// fields replace the earlier ones, its hosts go in front of them.
func (c *Config) SetURL(u *URL) {
	switch {
	case c.URL == nil:
		c.Hosts = u.Hosts()
	case u.Host == "":
		// apr_pstrcat(p, NULL, " ", host) stops at the NULL: no host.
		c.Hosts = ""
	default:
		c.Hosts = u.Host + " " + c.Hosts
	}
	c.URL = u
}

func (c *Config) groupAttributes() []string {
	if len(c.GroupAttributes) > 0 {
		return c.GroupAttributes
	}
	if c.Version == Apache22 {
		return []string{"member", "uniquemember"}
	}
	return []string{"member", "uniqueMember"}
}

func (c *Config) subGroupAttributes() []string {
	if len(c.SubGroupAttributes) > 0 {
		return c.SubGroupAttributes
	}
	return []string{"member", "uniqueMember"}
}

func (c *Config) subGroupClasses() []string {
	if len(c.SubGroupClasses) > 0 {
		return c.SubGroupClasses
	}
	return []string{"groupOfNames", "groupOfUniqueNames"}
}

// DirectiveOptions govern [Config.Apply].
type DirectiveOptions struct {
	// AllowExec lets "AuthLDAPBindPassword exec:program args" run the
	// program, as Apache does at startup. Off by default: Apply then
	// returns an error wrapping [ErrExecNotAllowed].
	AllowExec bool
	// ServerRoot resolves a relative exec: program (ap_server_root_relative).
	ServerRoot string
	// ExecTimeout bounds the program's run (default 10s).
	ExecTimeout time.Duration
}

// ErrExecNotAllowed is wrapped by the error of an exec: bind password
// when DirectiveOptions.AllowExec is off.
var ErrExecNotAllowed = errors.New("running a program for AuthLDAPBindPassword (exec:) is not allowed")

// Directives lists the directives [Config.Apply] knows, in lower case.
var Directives = []string{
	"authldapurl", "authldapbinddn", "authldapbindpassword", "authldapbindauthoritative",
	"authldapremoteuserisdn", "authldapremoteuserattribute", "authldapcomparednonserver",
	"authldapsubgroupattribute", "authldapsubgroupclass", "authldapmaxsubgroupdepth",
	"authldapgroupattribute", "authldapgroupattributeisdn", "authldapdereferencealiases",
	"authldapauthorizeprefix", "authldapinitialbindasuser", "authldapinitialbindpattern",
	"authldapsearchasuser", "authldapcompareasuser", "authzldapauthoritative",
}

// Apply applies one directive of mod_authnz_ldap, its arguments split as
// ap_getword_conf splits them. The error is Apache's message (the caller
// adds the file and line). Directives of the other version are refused
// as Apache refuses an unknown directive.
func (c *Config) Apply(name string, args []string, o DirectiveOptions) error {
	n := strings.ToLower(name)
	only24 := map[string]bool{"authldapsubgroupattribute": true, "authldapsubgroupclass": true,
		"authldapmaxsubgroupdepth": true, "authldapauthorizeprefix": true, "authldapinitialbindasuser": true,
		"authldapinitialbindpattern": true, "authldapsearchasuser": true, "authldapcompareasuser": true}
	if (c.Version == Apache22 && only24[n]) || (c.Version == Apache24 && n == "authzldapauthoritative") {
		return fmt.Errorf("Invalid command '%s', perhaps misspelled or defined by a module not included in the server configuration", name)
	}
	take := func(min, max int) error {
		if len(args) < min || len(args) > max {
			switch {
			case min == 1 && max == 1:
				return fmt.Errorf("%s takes one argument", name)
			case min == 1 && max == 2:
				return fmt.Errorf("%s takes one or two arguments", name)
			case min == 2 && max == 2:
				return fmt.Errorf("%s takes two arguments", name)
			}
			return fmt.Errorf("%s requires at least one argument", name)
		}
		return nil
	}
	flag := func(p *bool) error {
		if err := take(1, 1); err != nil {
			return err
		}
		switch {
		case strings.EqualFold(args[0], "on"):
			*p = true
		case strings.EqualFold(args[0], "off"):
			*p = false
		default:
			return fmt.Errorf("%s must be On or Off", name)
		}
		return nil
	}
	switch n {
	case "authldapurl":
		if err := take(1, 2); err != nil {
			return err
		}
		extra := ""
		if len(args) == 2 {
			extra = args[1]
		}
		u, err := ParseURL(args[0], extra)
		if err != nil {
			return err
		}
		c.SetURL(u)
	case "authldapbinddn":
		if err := take(1, 1); err != nil {
			return err
		}
		c.BindDN = args[0]
	case "authldapbindpassword":
		if err := take(1, 1); err != nil {
			return err
		}
		pw := args[0]
		if len(pw) > 5 && strings.HasPrefix(pw, "exec:") {
			out, err := execPassword(pw[5:], o)
			if err != nil {
				return err
			}
			pw = out
		}
		if pw == "" {
			return errors.New("Empty passwords are invalid for AuthLDAPBindPassword")
		}
		c.BindPassword = pw
	case "authldapbindauthoritative":
		return flag(&c.BindAuthoritative)
	case "authldapremoteuserisdn":
		return flag(&c.RemoteUserIsDN)
	case "authldapremoteuserattribute":
		if err := take(1, 1); err != nil {
			return err
		}
		c.RemoteUserAttribute = args[0]
	case "authldapcomparednonserver":
		return flag(&c.CompareDNOnServer)
	case "authldapgroupattributeisdn":
		return flag(&c.GroupAttributeIsDN)
	case "authldapsearchasuser":
		return flag(&c.SearchAsUser)
	case "authldapcompareasuser":
		return flag(&c.CompareAsUser)
	case "authldapinitialbindasuser":
		return flag(&c.InitialBindAsUser)
	case "authzldapauthoritative":
		return flag(&c.Authoritative)
	case "authldapsubgroupattribute", "authldapsubgroupclass", "authldapgroupattribute":
		if err := take(1, 1<<30); err != nil {
			return err
		}
		for _, a := range args {
			switch n {
			case "authldapsubgroupattribute":
				if len(c.SubGroupAttributes) == groupAttrMax {
					return errors.New("Too many AuthLDAPSubGroupAttribute values")
				}
				c.SubGroupAttributes = append(c.SubGroupAttributes, a)
			case "authldapsubgroupclass":
				if len(c.SubGroupClasses) > groupAttrMax {
					return errors.New("Too many AuthLDAPSubGroupClass values")
				}
				c.SubGroupClasses = append(c.SubGroupClasses, a)
			default:
				if len(c.GroupAttributes) > groupAttrMax {
					return errors.New("Too many AuthLDAPGroupAttribute directives")
				}
				c.GroupAttributes = append(c.GroupAttributes, a)
			}
		}
	case "authldapmaxsubgroupdepth":
		if err := take(1, 1); err != nil {
			return err
		}
		c.MaxSubGroupDepth = int(cstrtol(args[0])) // atol
	case "authldapdereferencealiases":
		if err := take(1, 1); err != nil {
			return err
		}
		d, err := ParseDeref(args[0])
		if err != nil {
			return err
		}
		c.Deref = d
	case "authldapauthorizeprefix":
		if err := take(1, 1); err != nil {
			return err
		}
		c.AuthorizePrefix = args[0]
	case "authldapinitialbindpattern":
		if err := take(2, 2); err != nil {
			return err
		}
		re, err := regexp.Compile(args[0])
		if err != nil {
			return fmt.Errorf("AuthLDAPInitialBindPattern: cannot compile regular expression '%s'", args[0])
		}
		c.InitialBindPattern, c.InitialBindSubst = re, args[1]
	default:
		return fmt.Errorf("Invalid command '%s', perhaps misspelled or defined by a module not included in the server configuration", name)
	}
	return nil
}

// execPassword runs an exec: bind password program (set_bind_password,
// ap_get_exec_line): the first line of its standard output, without the
// line end, at most 8191 bytes.
func execPassword(cmdline string, o DirectiveOptions) (string, error) {
	argv, ok := tokenizeArgv(cmdline)
	if !ok || len(argv) == 0 {
		return "", fmt.Errorf("Unable to parse exec arguments from %s", cmdline)
	}
	if !o.AllowExec {
		return "", fmt.Errorf("AuthLDAPBindPassword exec:%s: %w", cmdline, ErrExecNotAllowed)
	}
	prog := argv[0]
	if !filepath.IsAbs(prog) && o.ServerRoot != "" {
		prog = filepath.Join(o.ServerRoot, prog)
	}
	timeout := o.ExecTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, argv[1:]...)
	cmd.Dir = filepath.Dir(prog)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", fmt.Errorf("Unable to get bind password from exec of %s", cmdline)
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("Unable to get bind password from exec of %s", cmdline)
	}
	r := bufio.NewReader(out)
	var line []byte
	for len(line) < 8191 {
		b, err := r.ReadByte()
		if err != nil || b == '\n' || b == '\r' {
			break
		}
		line = append(line, b)
	}
	cancel()
	cmd.Wait()
	return string(line), nil
}

// tokenizeArgv splits a command line as apr_tokenize_to_argv does: words
// separated by blanks or tabs, "..." and '...' quoting, a backslash
// escaping a blank, tab or quote, and backslashes then removed.
func tokenizeArgv(s string) ([]string, bool) {
	var argv []string
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	skip()
	for i < len(s) {
		quoted := byte(0)
		if s[i] == '"' || s[i] == '\'' {
			quoted = s[i]
			i++
		}
		start := i
		for i < len(s) {
			if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(" \t\"'", s[i+1]) >= 0 {
				i += 2
				continue
			}
			if (quoted == 0 && (s[i] == ' ' || s[i] == '\t')) || (quoted != 0 && s[i] == quoted) {
				break
			}
			i++
		}
		raw := s[start:i]
		var b strings.Builder
		esc := false
		for j := 0; j < len(raw); j++ {
			if !esc && raw[j] == '\\' {
				esc = true
				continue
			}
			esc = false
			b.WriteByte(raw[j])
		}
		argv = append(argv, b.String())
		if i < len(s) {
			i++
		}
		skip()
	}
	return argv, true
}
