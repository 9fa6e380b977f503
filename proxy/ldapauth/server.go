package ldapauth

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ServerConfig is mod_ldap's server configuration (util_ldap_state_t) as
// one server sets it (a <VirtualHost>'s lines after the main server's,
// which is util_ldap_merge_config's merge). Build it with
// [NewServerConfig] and [ServerConfig.Apply]; [ServerConfig.Options] is
// what a [Client] takes.
//
// LDAPSharedCacheSize, LDAPSharedCacheFile and LDAPLibraryDebug are read
// and checked as Apache checks them, and change nothing: this package's
// caches are one in-process cache (as mod_ldap's shared memory cache is
// one for every child and virtual host), and there is no LDAP library
// debug output.
type ServerConfig struct {
	Version Version

	// CacheEntries, CacheTTL, OpCacheEntries and OpCacheTTL are
	// LDAPCacheEntries, LDAPCacheTTL, LDAPOpCacheEntries and
	// LDAPOpCacheTTL (util_ldap_set_cache_entries and the others: atol,
	// a negative size is 0, the TTL in seconds).
	CacheEntries   int64
	CacheTTL       time.Duration
	OpCacheEntries int64
	OpCacheTTL     time.Duration
	// SharedCacheSize and SharedCacheFile are LDAPSharedCacheSize and
	// LDAPSharedCacheFile (no effect here).
	SharedCacheSize int64
	SharedCacheFile string

	// GlobalCerts are the LDAPTrustedGlobalCert lines, in order.
	GlobalCerts []Cert
	// TrustedMode is LDAPTrustedMode; TrustedModeSet says a line set it
	// (secure_set: a virtual host that sets none takes the main
	// server's).
	TrustedMode    Mode
	TrustedModeSet bool
	// VerifyServerCert is LDAPVerifyServerCert (default on).
	VerifyServerCert bool
	// ConnectionTimeout is LDAPConnectionTimeout (default 10 seconds; 0
	// or less: none, the system's).
	ConnectionTimeout time.Duration
	// Timeout is LDAPTimeout (default 60 seconds; 0: none).
	Timeout time.Duration
	// LibraryDebug is LDAPLibraryDebug (no effect here).
	LibraryDebug int
	// ConnectionPoolTTL is LDAPConnectionPoolTTL: PoolTTLDefault when no
	// line set it (no limit; a virtual host then takes the main
	// server's), PoolTTLInfinite for a negative value, 0 for no pool.
	ConnectionPoolTTL time.Duration
	// Retries and RetryDelay are LDAPRetries (default 3) and
	// LDAPRetryDelay (default 0).
	Retries    int
	RetryDelay time.Duration
}

// The values of ServerConfig.ConnectionPoolTTL that are not a duration
// (AP_LDAP_CONNPOOL_DEFAULT and AP_LDAP_CONNPOOL_INFINITE): both mean no
// limit.
const (
	PoolTTLDefault  time.Duration = -1
	PoolTTLInfinite time.Duration = -2
)

// A Cert is one certificate line: LDAPTrustedGlobalCert's or
// LDAPTrustedClientCert's (apr_ldap_opt_tls_cert_t).
type Cert struct {
	Type CertType
	// Path is the file as written (Apache makes it relative to
	// ServerRoot); Password is the optional third argument.
	Path     string
	Password string
}

// CertType is a certificate's type (APR_LDAP_CA_TYPE_* and the others).
type CertType int

// The certificate types of util_ldap_parse_cert_type.
const (
	CertTypeUnknown CertType = iota
	CADER
	CABase64
	CACert7DB
	CASecmod
	CertDER
	CertBase64
	CertPFX
	CertKey3DB
	CertNickname
	KeyDER
	KeyBase64
	KeyPFX
)

var certTypeNames = [...]string{"", "CA_DER", "CA_BASE64", "CA_CERT7_DB", "CA_SECMOD", "CERT_DER", "CERT_BASE64", "CERT_PFX", "CERT_KEY3_DB", "CERT_NICKNAME", "KEY_DER", "KEY_BASE64", "KEY_PFX"}

func (t CertType) String() string {
	if t > 0 && int(t) < len(certTypeNames) {
		return certTypeNames[t]
	}
	return "unknown"
}

// ParseCertType is util_ldap_parse_cert_type: one of the names, in any
// case; CertTypeUnknown for anything else.
func ParseCertType(s string) CertType {
	for i, n := range certTypeNames {
		if i > 0 && strings.EqualFold(s, n) {
			return CertType(i)
		}
	}
	return CertTypeUnknown
}

// NeedsFile reports whether Apache checks that the certificate's path
// exists when it reads the line: every type but CERT_NICKNAME.
func (c Cert) NeedsFile() bool { return c.Type != CertNickname }

// NewServerConfig returns util_ldap_create_config's defaults.
func NewServerConfig(v Version) *ServerConfig {
	return &ServerConfig{
		Version:           v,
		SharedCacheSize:   sharedCacheDefault(v),
		CacheEntries:      1024,
		CacheTTL:          600 * time.Second,
		OpCacheEntries:    1024,
		OpCacheTTL:        600 * time.Second,
		TrustedMode:       ModeNone,
		VerifyServerCert:  true,
		ConnectionTimeout: 10 * time.Second,
		Timeout:           60 * time.Second,
		ConnectionPoolTTL: PoolTTLDefault,
		Retries:           3,
	}
}

func sharedCacheDefault(v Version) int64 {
	if v == Apache22 {
		return 100000
	}
	return 500000
}

// ServerDirectives lists the server directives of mod_ldap
// [ServerConfig.Apply] reads, in lower case; DirDirectives its
// per-directory ones ([CheckDirDirective]). Some are 2.4's only.
var (
	ServerDirectives = []string{
		"ldapsharedcachesize", "ldapsharedcachefile", "ldapcacheentries", "ldapcachettl",
		"ldapopcacheentries", "ldapopcachettl", "ldaptrustedglobalcert", "ldaptrustedmode",
		"ldapverifyservercert", "ldapconnectiontimeout", "ldaplibrarydebug", "ldaptimeout",
		"ldapconnectionpoolttl", "ldapretries", "ldapretrydelay",
	}
	DirDirectives = []string{"ldaptrustedclientcert", "ldapreferrals", "ldapreferralhoplimit"}
)

// globalOnly are the handlers that begin with
// ap_check_cmd_context(cmd, GLOBAL_ONLY): the line may not be in a
// <VirtualHost>.
var globalOnly = map[string]bool{
	"ldapsharedcachesize": true, "ldapsharedcachefile": true, "ldapcacheentries": true, "ldapcachettl": true,
	"ldapopcacheentries": true, "ldapopcachettl": true, "ldaptrustedglobalcert": true, "ldapverifyservercert": true,
	"ldapconnectiontimeout": true, "ldaplibrarydebug": true, "ldaptimeout": true, "ldapretries": true, "ldapretrydelay": true,
}

// ServerContext is where a server directive is read.
type ServerContext struct {
	// VirtualHost: inside <VirtualHost> (cmd->server->is_virtual).
	VirtualHost bool
}

// Apply applies one server directive of mod_ldap as its handler in
// util_ldap.c does (the number of arguments is the directive table's
// to check): the error is Apache's message, without the file and line.
// A certificate's file is not looked at here: Apache checks that it
// exists ([Cert.NeedsFile]) after making it relative to ServerRoot,
// which is the caller's.
func (s *ServerConfig) Apply(name string, args []string, at ServerContext) error {
	n := strings.ToLower(name)
	if globalOnly[n] && at.VirtualHost {
		// ap_check_cmd_context's message.
		return fmt.Errorf("%s cannot occur within <VirtualHost> section", name)
	}
	arg := ""
	if len(args) > 0 {
		arg = args[0]
	}
	switch n {
	case "ldapsharedcachesize":
		s.SharedCacheSize = cstrtol(arg)
	case "ldapsharedcachefile":
		s.SharedCacheFile = arg
	case "ldapcachettl":
		s.CacheTTL = seconds(cstrtol(arg))
	case "ldapcacheentries":
		s.CacheEntries = max(cstrtol(arg), 0)
	case "ldapopcachettl":
		s.OpCacheTTL = seconds(cstrtol(arg))
	case "ldapopcacheentries":
		s.OpCacheEntries = max(cstrtol(arg), 0)
	case "ldaptrustedglobalcert":
		t := ParseCertType(arg)
		if t == CertTypeUnknown {
			return fmt.Errorf("The certificate type %s is not recognised. It should be one of CA_DER, CA_BASE64, CA_CERT7_DB, CA_SECMOD, CERT_DER, CERT_BASE64, CERT_KEY3_DB, CERT_NICKNAME, KEY_DER, KEY_BASE64", arg)
		}
		c := Cert{Type: t}
		if len(args) > 1 {
			c.Path = args[1]
		}
		if len(args) > 2 {
			c.Password = args[2]
		}
		s.GlobalCerts = append(s.GlobalCerts, c)
	case "ldaptrustedmode":
		m, ok := ParseMode(arg)
		if !ok {
			return errors.New("Invalid LDAPTrustedMode setting: must be one of NONE, SSL, or TLS/STARTTLS")
		}
		s.TrustedMode, s.TrustedModeSet = m, true
	case "ldapverifyservercert":
		// FLAG: the reader took On or Off.
		s.VerifyServerCert = strings.EqualFold(arg, "on")
	case "ldapconnectiontimeout":
		s.ConnectionTimeout = seconds(cstrtol(arg))
	case "ldaplibrarydebug":
		s.LibraryDebug = catoi(arg)
	case "ldaptimeout":
		// strtol must read a digit and every byte after the white space.
		v, ok := strtolAll(arg)
		if !ok {
			return errors.New("Timeout not numerical")
		}
		if v < 0 {
			return errors.New("Timeout must be non-negative")
		}
		s.Timeout = seconds(v)
	case "ldapconnectionpoolttl":
		if strings.HasPrefix(arg, "-") {
			// util_ldap_set_conn_ttl: a negative value, read or not, is
			// AP_LDAP_CONNPOOL_INFINITE.
			s.ConnectionPoolTTL = PoolTTLInfinite
			break
		}
		d, err := TimeoutParameter(arg, "s")
		if err != nil {
			return errors.New("LDAPConnectionPoolTTL has wrong format")
		}
		s.ConnectionPoolTTL = d
	case "ldapretrydelay":
		d, err := TimeoutParameter(arg, "s")
		if err != nil {
			return errors.New("LDAPRetryDelay has wrong format")
		}
		s.RetryDelay = d
	case "ldapretries":
		v := catoi(arg)
		if v < 0 {
			return errors.New("LDAPRetries must be >= 0")
		}
		s.Retries = v
	default:
		return fmt.Errorf("ldapauth: %s is not a server directive of mod_ldap", name)
	}
	return nil
}

// seconds is a count of seconds as a Duration, saturating where the
// Duration would overflow (Apache's long of microseconds overflows too,
// past any time a cache could hold an entry).
func seconds(n int64) time.Duration {
	switch {
	case n > math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	case n < math.MinInt64/int64(time.Second):
		return math.MinInt64
	}
	return time.Duration(n) * time.Second
}

// TimeoutParameter is ap_timeout_parameter_parse: a non-negative decimal
// number (strtoll: leading white space and a sign allowed) followed by a
// unit, "s" (seconds), "h", "ms" or "mi" (minutes), of which only those
// letters are looked at, or none for defaultUnit.
func TimeoutParameter(s, defaultUnit string) (time.Duration, error) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	end := k
	if k == j {
		end = 0 // no digits: strtoll reads nothing
	}
	n, err := strconv.ParseInt(s[i:k], 10, 64)
	if k == j {
		n, err = 0, nil
	}
	if err != nil {
		return 0, err // ERANGE
	}
	unit := s[end:]
	if unit == "" {
		unit = defaultUnit
	}
	if n < 0 {
		return 0, errors.New("negative")
	}
	bad := errors.New("bad unit")
	over := func(limit int64) bool { return n > limit }
	const usec = 1000000 // APR_USEC_PER_SEC
	switch unit[0] {
	case 's':
		if over(math.MaxInt64 / usec) {
			return 0, bad
		}
		return clampMicros(n * usec), nil
	case 'h':
		if over(math.MaxInt64 / 3600 / usec) {
			return 0, bad
		}
		return clampMicros(n * 3600 * usec), nil
	case 'm':
		if len(unit) < 2 {
			return 0, bad
		}
		switch unit[1] {
		case 's':
			if over(math.MaxInt64 / 1000) {
				return 0, bad
			}
			return clampMicros(n * 1000), nil
		case 'i':
			if over(math.MaxInt64 / 60 / usec) {
				return 0, bad
			}
			return clampMicros(n * 60 * usec), nil
		}
	}
	return 0, bad
}

// clampMicros is a count of microseconds (apr_interval_time_t) as a
// Duration.
func clampMicros(us int64) time.Duration {
	if us > math.MaxInt64/int64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}

// CheckDirDirective checks one of mod_ldap's per-directory directives
// (LDAPTrustedClientCert, LDAPReferrals, LDAPReferralHopLimit; 2.2 has
// LDAPTrustedClientCert only, at server level) as its handler does.
func CheckDirDirective(v Version, name string, args []string) error {
	arg := ""
	if len(args) > 0 {
		arg = args[0]
	}
	switch strings.ToLower(name) {
	case "ldaptrustedclientcert":
		t := ParseCertType(arg)
		if v == Apache22 {
			switch t {
			case CertTypeUnknown:
				return fmt.Errorf("The certificate type \"%s\" is not recognised. It should be one of CERT_DER, CERT_BASE64, CERT_NICKNAME, CERT_PFX,KEY_DER, KEY_BASE64, KEY_PFX", arg)
			case CADER, CABase64, CACert7DB, CASecmod, CertPFX, CertKey3DB:
				return fmt.Errorf("The certificate type \"%s\" is only valid within a LDAPTrustedGlobalCert directive. Only CERT_DER, CERT_BASE64, CERT_NICKNAME, KEY_DER, and KEY_BASE64 may be used.", arg)
			}
			return nil
		}
		switch t {
		case CertTypeUnknown:
			return fmt.Errorf("The certificate type \"%s\" is not recognised. It should be one of CA_DER, CA_BASE64, CERT_DER, CERT_BASE64, CERT_NICKNAME, CERT_PFX, KEY_DER, KEY_BASE64, KEY_PFX", arg)
		case CACert7DB, CASecmod, CertPFX, CertKey3DB:
			return fmt.Errorf("The certificate type \"%s\" is only valid within a LDAPTrustedGlobalCert directive. Only CA_DER, CA_BASE64, CERT_DER, CERT_BASE64, CERT_NICKNAME, KEY_DER, and KEY_BASE64 may be used.", arg)
		}
	case "ldapreferrals":
		if !strings.EqualFold(arg, "on") && !strings.EqualFold(arg, "off") && !strings.EqualFold(arg, "default") {
			return errors.New("LDAPReferrals must be 'on', 'off', or 'default'")
		}
	case "ldapreferralhoplimit":
		if int32(cstrtol(arg)) <= 0 {
			// dc->ReferralHopLimit is an int set from atol.
			return errors.New("LDAPReferralHopLimit must be greater than zero (Use 'LDAPReferrals Off' to disable referral chasing)")
		}
	default:
		return fmt.Errorf("ldapauth: %s is not a per-directory directive of mod_ldap", name)
	}
	return nil
}

// Options returns the Client options of the configuration. TrustedCAFiles
// is the file of the last CA_BASE64 certificate: apr-util gives each
// certificate to OpenLDAP in turn (apr_ldap_set_option,
// LDAP_OPT_X_TLS_CACERTFILE), each replacing the one before.
// [ServerConfig.Unsupported] says which certificates it cannot use.
func (s *ServerConfig) Options() Options {
	o := DefaultOptions()
	o.CacheEntries = int(min(s.CacheEntries, math.MaxInt32))
	o.CacheTTL = s.CacheTTL
	o.OpCacheEntries = int(min(s.OpCacheEntries, math.MaxInt32))
	o.OpCacheTTL = s.OpCacheTTL
	o.ConnectionTimeout = max(s.ConnectionTimeout, 0)
	o.Timeout = s.Timeout
	o.Retries = s.Retries
	o.RetryDelay = s.RetryDelay
	o.TrustedMode = s.TrustedMode
	o.VerifyServerCert = s.VerifyServerCert
	o.ConnectionPoolTTL = s.ConnectionPoolTTL
	if o.ConnectionPoolTTL < 0 {
		o.ConnectionPoolTTL = -1
	}
	o.TrustedCAFiles = nil
	for _, c := range s.GlobalCerts {
		if c.Type == CABase64 {
			o.TrustedCAFiles = []string{c.Path}
		}
	}
	return o
}

// Unsupported returns the first certificate of LDAPTrustedGlobalCert this
// package cannot use as Apache 2.4 with OpenLDAP does, and why; ok is
// false when there is none. Apache gives OpenLDAP a CA_BASE64 file only;
// at a certificate of any other type apr-util fails ("The OpenLDAP SDK
// only understands the PEM (BASE64) file type") and gives OpenLDAP none
// of the lines after it; CERT_BASE64 and KEY_BASE64 make a client
// certificate, which this package does not present.
func (s *ServerConfig) Unsupported() (c Cert, why string, ok bool) {
	for _, c := range s.GlobalCerts {
		switch c.Type {
		case CABase64:
			continue
		case CertBase64, KeyBase64:
			return c, "a client certificate for LDAP connections, which orderly does not present", true
		}
		return c, "Apache 2.4 with OpenLDAP (Debian's apr-util) does not use it: OpenLDAP takes PEM (CA_BASE64) files only, and apr-util stops at this line, leaving it and every LDAPTrustedGlobalCert after it unused", true
	}
	return Cert{}, "", false
}
