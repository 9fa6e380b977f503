package digest

import (
	"fmt"
	"strings"
	"time"
)

// DefaultNonceLifetime is AuthDigestNonceLifetime's default (DFLT_NONCE_LIFE).
const DefaultNonceLifetime = 300 * time.Second

// nextNonceDelta is NEXTNONCE_DELTA: a granted request whose nonce expires
// within this long gets a nextnonce in its Authentication-Info.
const nextNonceDelta = 30 * time.Second

// A Config is the Digest configuration in effect for one request: what
// digest_config_rec holds for the request's per-directory configuration,
// plus the realm.
//
// Scope: mod_auth_digest has no merge function, and httpd creates a
// module's per-directory record only for a section that uses one of the
// module's directives. So the digest settings in effect are those of the
// innermost section (<Directory>, <Location>, .htaccess, ...) that has any
// of AuthDigestProvider, AuthDigestQop, AuthDigestNonceLifetime,
// AuthDigestNcCheck, AuthDigestAlgorithm or AuthDigestDomain, taken whole
// - every setting it does not name is back at its default - or the
// defaults if no section has one. AuthName, a directive of mod_authn_core
// since 2.4, merges like the other core settings (the innermost one wins)
// and is not one of them.
//
// The zero Config is a scope without AuthName (Authenticate answers 500,
// AH01780) whose nonces are one-time nonces; NewConfig gives Apache's
// defaults.
type Config struct {
	// AuthName is the realm: the value of the AuthName in effect, after
	// the expression in it, if any, is evaluated (ap_auth_name before
	// quoting). HasAuthName is false when no AuthName applies.
	//
	// Apache 2.4.71 uses the realm quoted as ap_escape_quotes quotes it
	// everywhere: in the challenge, in the nonce, for the comparison
	// with the realm the client sends, and as the realm looked up in
	// the password file. So an AuthName with a '"' in it can never be
	// authenticated: the client sends the realm unquoted, and it never
	// matches (AH01788).
	AuthName    string
	HasAuthName bool

	// Providers are the AuthDigestProvider names, in order ("file" when
	// none is named). Authenticate does not use them: the caller maps
	// them to the Lookup it passes.
	Providers []string

	// NonceLifetime is AuthDigestNonceLifetime: how long a nonce is
	// good for (to the microsecond, as apr_time_t). 0 makes every nonce
	// a one-time nonce (good for one request; the next one gets the
	// nextnonce of Authentication-Info or a stale=true challenge); a
	// negative lifetime makes nonces good forever.
	NonceLifetime time.Duration

	// NcCheck is AuthDigestNcCheck (Off by default). See Server.
	NcCheck bool

	// Domain holds the AuthDigestDomain URIs, in order. The challenge
	// lists them, separated by spaces and not escaped, in its domain
	// parameter, except for requests that mod_proxy handles.
	Domain []string
}

// NewConfig returns the configuration of a scope with AuthType Digest, the
// given AuthName and no other digest directive: Apache's defaults.
func NewConfig(authName string) Config {
	return Config{AuthName: authName, HasAuthName: true, NonceLifetime: DefaultNonceLifetime}
}

// realm is ap_auth_name(r): the AuthName quoted by ap_escape_quotes.
func (c *Config) realm() string { return escapeQuotes(c.AuthName) }

// lifetimeUsec is the nonce lifetime as apr_time_t microseconds.
func (c *Config) lifetimeUsec() int64 { return c.NonceLifetime.Microseconds() }

// The descriptions httpd appends to an argument-count error (cmd->errmsg
// of digest_cmds).
var directiveHelp = map[string]string{
	"authdigestprovider":      "specify the auth providers for a directory or location",
	"authdigestqop":           "A list of quality-of-protection options",
	"authdigestnoncelifetime": "Maximum lifetime of the server nonce (seconds)",
	"authdigestnccheck":       "Whether or not to check the nonce-count sent by the client",
	"authdigestalgorithm":     "The algorithm used for the hash calculation",
	"authdigestdomain":        "A list of URI's which belong to the same protection space as the current URI",
	"authdigestshmemsize":     "The amount of shared memory to allocate for keeping track of clients",
}

var directiveNames = map[string]string{
	"authdigestprovider":      "AuthDigestProvider",
	"authdigestqop":           "AuthDigestQop",
	"authdigestnoncelifetime": "AuthDigestNonceLifetime",
	"authdigestnccheck":       "AuthDigestNcCheck",
	"authdigestalgorithm":     "AuthDigestAlgorithm",
	"authdigestdomain":        "AuthDigestDomain",
	"authdigestshmemsize":     "AuthDigestShmemSize",
}

// Set applies one of mod_auth_digest's per-directory directives with its
// (already unquoted) arguments to c, as the module's command handlers do,
// and returns the error httpd reports for a bad one (the text after
// "Syntax error on line N of FILE:"). The directive name is matched
// without regard to case, as httpd matches it. In Apache 2.4.71:
//
//   - AuthDigestQop accepts only "auth" (any case), one or more times;
//     "none" and "auth-int" are errors ("AuthDigestQop is deprecated:
//     only 'auth' is supported"). Every challenge says qop="auth".
//   - AuthDigestAlgorithm accepts only "MD5" (any case); MD5-sess is an
//     error ("Unsupported algorithm in AuthDigestAlgorithm: MD5-sess").
//     Every challenge says algorithm=MD5.
//   - AuthDigestNonceLifetime takes whole seconds (see
//     ParseNonceLifetime).
//   - AuthDigestNcCheck takes On or Off.
//   - AuthDigestDomain and AuthDigestProvider append to their lists.
//     Set does not check that a provider exists (httpd: "Unknown Authn
//     provider: NAME"); the caller does.
//
// AuthDigestShmemSize is a server-wide directive: see ParseShmemSize.
// AuthName is not mod_auth_digest's: set Config.AuthName.
func (c *Config) Set(directive string, args ...string) error {
	key := strings.ToLower(directive)
	name, ok := directiveNames[key]
	if !ok || key == "authdigestshmemsize" {
		return fmt.Errorf("digest: %s is not a per-directory directive of mod_auth_digest", directive)
	}
	switch key {
	case "authdigestprovider", "authdigestqop", "authdigestdomain": // ITERATE
		if len(args) == 0 {
			return fmt.Errorf("%s requires at least one argument, %s", name, directiveHelp[key])
		}
	default: // TAKE1, FLAG
		if len(args) != 1 {
			return fmt.Errorf("%s takes one argument, %s", name, directiveHelp[key])
		}
	}
	switch key {
	case "authdigestprovider":
		c.Providers = append(c.Providers, args...)
	case "authdigestqop":
		// As set_qop; httpd stops at the first bad argument.
		for _, a := range args {
			if !equalFoldASCII(a, "auth") {
				return fmt.Errorf("AuthDigestQop is deprecated: only 'auth' is supported")
			}
		}
	case "authdigestnoncelifetime":
		d, err := ParseNonceLifetime(args[0])
		if err != nil {
			return err
		}
		c.NonceLifetime = d
	case "authdigestnccheck":
		switch {
		case equalFoldASCII(args[0], "on"):
			c.NcCheck = true
		case equalFoldASCII(args[0], "off"):
			c.NcCheck = false
		default:
			return fmt.Errorf("%s must be On or Off", name)
		}
	case "authdigestalgorithm":
		if !equalFoldASCII(args[0], "MD5") {
			return fmt.Errorf("Unsupported algorithm in AuthDigestAlgorithm: %s", args[0])
		}
	case "authdigestdomain":
		c.Domain = append(c.Domain, args...)
	}
	return nil
}

// ParseNonceLifetime parses the argument of AuthDigestNonceLifetime as
// set_nonce_lifetime does: strtol base 10 (leading white space and a sign
// allowed), and the number must be followed by nothing or by white space
// (so "" is 0 and "30 s" is 30). The result is in whole seconds: 0 means
// one-time nonces, a negative value nonces that never expire.
func ParseNonceLifetime(arg string) (time.Duration, error) {
	t := cString(arg)
	n, end, _ := strtol(t, 10)
	if end < len(t) && !isSpace(t[end]) {
		return 0, fmt.Errorf("Invalid time in AuthDigestNonceLifetime: %s", arg)
	}
	// apr_time_from_sec: microseconds in an int64, wrapping as C does;
	// kept as a Duration that saturates rather than wraps again.
	usec := n * 1_000_000
	switch {
	case usec > int64(time.Duration(1<<63-1)/time.Microsecond):
		return time.Duration(1<<63 - 1), nil
	case usec < int64(time.Duration(-1<<63)/time.Microsecond):
		return time.Duration(-1 << 63), nil
	}
	return time.Duration(usec) * time.Microsecond, nil
}

// Sizes of httpd's shared-memory structures on a 64-bit Linux build, for
// AuthDigestShmemSize: struct hash_table, a bucket pointer, and
// client_entry (a 4-byte key, its padding, a pointer, an unsigned long
// and an apr_time_t).
const (
	shmTableSize  = 48
	shmBucketSize = 8
	shmEntrySize  = 32
	shmHashDepth  = 5  // HASH_DEPTH
	rmmBlockHdr   = 24 // apr_rmm's per-block header
	rmmHdr        = 24 // apr_rmm's header at the start of the segment
)

// ParseShmemSize parses the argument of AuthDigestShmemSize as
// set_shmem_size does: strtol base 10, then optional white space and a
// unit (none, b or B: bytes; k or K: KiB; m or M: MiB; anything after the
// unit is ignored), and the size must hold at least one client
// ("size in AuthDigestShmemSize too small: 0 < 88").
func ParseShmemSize(arg string) (int64, error) {
	s := cString(arg)
	n, end, _ := strtol(s, 10)
	for end < len(s) && isSpace(s[end]) {
		end++
	}
	var unit byte
	if end < len(s) {
		unit = s[end]
	}
	switch unit {
	case 0, 'b', 'B':
	case 'k', 'K':
		n *= 1024
	case 'm', 'M':
		n *= 1048576
	default:
		return 0, fmt.Errorf("Invalid size in AuthDigestShmemSize: %s", arg)
	}
	if min := int64(shmTableSize + shmBucketSize + shmEntrySize); n < min {
		return 0, fmt.Errorf("size in AuthDigestShmemSize too small: %d < %d", n, min)
	}
	return n, nil
}

// ClientsForShmemSize estimates how many clients Apache keeps in a
// segment of AuthDigestShmemSize bytes: what is left after apr_rmm's
// header, the hash table (set_shmem_size's bucket count) and the two
// counters, divided by an entry with its apr_rmm header. Apache's default
// of 1000 bytes holds about 14. It is an estimate (apr_rmm aligns and
// splits blocks), for a Server that should forget clients about as soon
// as Apache would; Options.MaxClients need not follow it.
func ClientsForShmemSize(size int64) int {
	buckets := (size - shmTableSize) / (shmBucketSize + shmHashDepth*shmEntrySize)
	if buckets < 1 {
		buckets = 1
	}
	left := size - rmmHdr - (rmmBlockHdr + shmTableSize + shmBucketSize*buckets) - 2*(rmmBlockHdr+8)
	n := left / (rmmBlockHdr + shmEntrySize)
	if n < 1 {
		return 1
	}
	return int(n)
}
