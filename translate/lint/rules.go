package lint

import (
	"fmt"
	"strings"
)

// Severity is how much a finding matters: an error breaks start-up or
// changes who gets access, a warning changes behaviour, info is a note.
type Severity string

// The severities, from the least to the most severe.
const (
	Info    Severity = "info"
	Warning Severity = "warning"
	Error   Severity = "error"
)

// Rank orders severities: info 1, warning 2, error 3 (0 for anything else).
func (s Severity) Rank() int {
	switch s {
	case Info:
		return 1
	case Warning:
		return 2
	case Error:
		return 3
	}
	return 0
}

// ParseSeverity reads "info", "warning" or "error" (case-insensitive).
func ParseSeverity(s string) (Severity, error) {
	switch v := Severity(strings.ToLower(s)); v {
	case Info, Warning, Error:
		return v, nil
	}
	return "", fmt.Errorf("unknown severity %q (want info, warning or error)", s)
}

// Rule is one entry of the catalogue (shared/docs/rule-catalogue.md) or
// one of orderly's own checks (ORD-*): its stable ID, its severity, and the
// texts every finding of it starts from.
type Rule struct {
	ID       string
	Severity Severity
	Name     string // a short CamelCase name, for SARIF
	Short    string // one line: what the rule is about
	Change   string // what changes in 2.4
	Fix      string // the usual fix
	Source   string // where the rule comes from
}

// rules is the table: every ID, its severity and its texts, in one place.
// The order is the order of Rules() and of SARIF's rules array.
var rules = []Rule{
	// Build and modules (upgrade document §2.1, §9).
	{"BLD-01", Error, "ModuleSplitOut", "A feature the configuration uses lives in a separate module in 2.4",
		"mod_cache's disk provider, the memory cache, the balancer's lbmethods, its shared memory and mod_ssl's session caches are separate modules in 2.4 (mod_cache_disk, mod_cache_socache, mod_lbmethod_*, mod_slotmem_shm, mod_socache_*).",
		"Add the LoadModule line of the module that now provides the feature.", "upgrade §2.1.4"},
	{"BLD-02", Error, "ModuleGone", "LoadModule of a module that is renamed or gone in 2.4",
		"The shared object does not exist in 2.4, so the LoadModule line stops start-up ('Cannot load ... cannot open shared object file').",
		"Remove the line, or load the 2.4 module that replaces it.", "upgrade §2.1.2, §2.1.5"},
	{"BLD-03", Error, "ModuleNotStock", "LoadModule of a module that is not part of the stock 2.4 server",
		"Every module must be rebuilt for 2.4; a 2.2 build of a third-party module does not load (its module structure or symbols do not match).",
		"Install or build the 2.4 version of the module (the tool cannot tell how the file named here was built).", "upgrade §9.3, §9.4"},

	// Directives (upgrade document §2.2).
	{"DIR-01", Info, "MaxRequestsPerChildRenamed", "MaxRequestsPerChild is renamed MaxConnectionsPerChild",
		"MaxRequestsPerChild is renamed MaxConnectionsPerChild; the old name still works.",
		"Rename the directive to MaxConnectionsPerChild.", "upgrade §2.2"},
	{"DIR-02", Info, "MaxClientsRenamed", "MaxClients is renamed MaxRequestWorkers",
		"MaxClients is renamed MaxRequestWorkers; the old name still works. Under an asynchronous MPM (event) the number of clients served is not the number of worker threads.",
		"Rename the directive to MaxRequestWorkers and size it in threads for worker/event.", "upgrade §2.2"},
	{"DIR-03", Warning, "DefaultTypeIgnored", "DefaultType has no effect",
		"DefaultType has no effect in 2.4; with a value other than none the server logs 'AH00117: Ignoring deprecated use of DefaultType'. Files of unknown type are served without a Content-Type.",
		"Remove DefaultType; give the types with AddType, or ForceType in the sections that need one.", "upgrade §2.2, §7.1"},
	{"DIR-04", Error, "AllowOverrideDefaultNone", "An .htaccess file is read only because of 2.2's default AllowOverride All",
		"AllowOverride defaults to None in 2.4 (2.2: All). Where no AllowOverride is set at all, 2.4 still opens .htaccess files but allows nothing in them: every request below answers 500 ('... not allowed here'); once AllowOverride None is written, the files and their access rules are ignored.",
		"Set AllowOverride explicitly in the <Directory> of each tree that has .htaccess files.", "upgrade §2.2, §7.3"},
	{"DIR-05", Warning, "EnableSendfileDefaultOff", "EnableSendfile defaults to Off",
		"EnableSendfile defaults to Off in 2.4 (2.2: On); this configuration never sets it.",
		"Write 'EnableSendfile On' to keep 2.2's behaviour, or accept the new default (safer on network file systems).", "upgrade §2.2"},
	{"DIR-06", Warning, "FileETagDefault", "FileETag defaults to 'MTime Size'",
		"FileETag defaults to 'MTime Size' in 2.4 (2.2: 'INode MTime Size'); this configuration never sets it, so every ETag changes and caches revalidate once.",
		"Write 'FileETag INode MTime Size' to keep 2.2's ETags, or accept the new default (the same ETag on every server of a farm).", "upgrade §2.2"},
	{"DIR-07", Error, "KeepAliveOnOff", "KeepAlive accepts only On or Off",
		"KeepAlive accepts only On or Off in 2.4 ('KeepAlive must be On or Off' at start-up); in 2.2 any value but Off or 0 meant On.",
		"Write KeepAlive On (or Off for 0).", "upgrade §2.2"},
	{"DIR-08", Warning, "NameVirtualHost", "NameVirtualHost has no effect; shared addresses are name-based",
		"NameVirtualHost has no effect in 2.4 (AH00548 at start-up). Any address and port used by several <VirtualHost> sections is name-based, even without it.",
		"Remove NameVirtualHost.", "upgrade §2.2"},
	{"DIR-09", Error, "MutexDirectives", "A mutex directive removed in favour of Mutex",
		"AcceptMutex, LockFile, RewriteLock, SSLMutex and SSLStaplingMutex are gone in 2.4 ('Invalid command' at start-up); the Mutex directive replaces them.",
		"Delete the line, or replace it with a Mutex line for the same mutex.", "upgrade §2.2"},
	{"DIR-10", Warning, "AccessCompat", "Order, Allow, Deny and Satisfy are superseded by Require",
		"Order, Allow, Deny and Satisfy are superseded by the Require family in 2.4 and work only through mod_access_compat.",
		"Translate the scope to Require (see the equivalents of the upgrade document §5.2).", "upgrade §2.2, §5"},
	{"DIR-11", Error, "AuthzAuthoritativeRemoved", "Authz*Authoritative directives are removed",
		"The Authz*Authoritative directives are gone in 2.4 ('Invalid command' at start-up); how Require lines combine is set by <RequireAny>, <RequireAll> and <RequireNone>.",
		"Remove the directive; express the combination with RequireAny/RequireAll/RequireNone.", "upgrade §2.2"},
	{"DIR-12", Info, "AuthnProviderAlias", "AuthnProviderAlias is provided by mod_authn_core",
		"<AuthnProviderAlias> moved from mod_authn_alias to mod_authn_core.",
		"Load mod_authn_core (and drop mod_authn_alias).", "upgrade §2.2"},
	{"DIR-13", Info, "AddOutputFilterByTypeFilter", "AddOutputFilterByType is provided by mod_filter",
		"AddOutputFilterByType moved from the core to mod_filter, which must be loaded.",
		"Keep 'LoadModule filter_module' in the 2.4 configuration.", "upgrade §2.2, §7.1"},
	{"DIR-14", Warning, "CacheSessionIdentifiersExact", "CacheIgnoreURLSessionIdentifiers matches exactly",
		"CacheIgnoreURLSessionIdentifiers matches the identifier exactly in 2.4; 2.2 matched part of a name, so 'sessionid' also removed 'jsessionid'.",
		"List every identifier in full (for example jsessionid, PHPSESSID).", "upgrade §2.2"},
	{"DIR-15", Warning, "CacheEnableProtocol", "CacheEnable needs the protocol to cache forward-proxy content",
		"CacheEnable's URL matches forward-proxy content only when it starts with the protocol; in 2.2 '/' matched all content.",
		"Add a CacheEnable line per protocol for proxied content, for example 'CacheEnable disk http://'.", "upgrade §2.2"},
	{"DIR-16", Error, "LDAPTrustedClientCertPerDir", "LDAPTrustedClientCert is per-directory only",
		"LDAPTrustedClientCert is a per-directory setting in 2.4: at server or virtual-host level it is 'not allowed here' at start-up, and each directory context that needs it must carry it.",
		"Move it into every <Directory>/<Location> that authenticates against LDAP.", "upgrade §2.2"},
	{"DIR-17", Error, "FilterProviderSyntax", "FilterProvider takes a boolean expression",
		"FilterProvider takes three arguments in 2.4 (name, provider, expression); the 2.2 form with a dispatch and a match is refused at start-up.",
		"Rewrite the dispatch and match as an ap_expr expression.", "upgrade §2.2"},
	{"DIR-18", Warning, "SSIExprParser", "mod_include's #if expr uses the new expression parser",
		"Server-side includes parse '<!--#if expr=... -->' with the 2.4 expression parser; 2.2 syntax ($var, unquoted strings) breaks. The tool does not read the pages.",
		"Rewrite the #if expressions, or write 'SSILegacyExprParser on' where the old pages are served.", "upgrade §2.2"},
	{"DIR-19", Error, "DebugLevelOption", "The DebugLevel option of mod_charset_lite and mod_ext_filter is removed",
		"CharsetOptions DebugLevel=n and ExtFilterOptions DebugLevel=n are refused at start-up in 2.4.",
		"Remove the option; use per-module LogLevel (for example 'LogLevel charset_lite:trace1').", "upgrade §2.2"},
	{"DIR-20", Error, "DumpIOLogLevel", "DumpIOLogLevel is removed",
		"DumpIOLogLevel is gone in 2.4 ('Invalid command' at start-up); mod_dumpio always logs at trace7.",
		"Replace it with 'LogLevel dumpio:trace7'.", "upgrade §2.2"},
	{"DIR-21", Error, "CARevocationCheck", "CRL checking must be switched on with SSLCARevocationCheck",
		"With SSLCARevocationFile/Path but no SSLCARevocationCheck, 2.4 does not check CRLs (the default is none): revoked certificates are accepted.",
		"Add 'SSLCARevocationCheck chain' (or leaf) beside it (SSLProxyCARevocationCheck for the proxy side).", "upgrade §2.2"},
	{"DIR-22", Warning, "DNStringFormat", "The format of the *_DN variables changed",
		"SSL_CLIENT_S_DN, SSL_CLIENT_I_DN, SSL_SERVER_S_DN and SSL_SERVER_I_DN use the RFC 2253 format in 2.4 ('CN=x,O=y' instead of '/O=y/CN=x'); FakeBasicAuth user names are these DNs.",
		"Update what compares or stores them, or add 'SSLOptions +LegacyDNStringFormat'.", "upgrade §2.2"},
	{"DIR-23", Warning, "SSLProxyCheckPeer", "SSLProxyCheckPeerCN and SSLProxyCheckPeerExpire default to On",
		"SSLProxyCheckPeerCN and SSLProxyCheckPeerExpire default to On in 2.4: a proxied HTTPS back end whose certificate names another host or has expired now answers 502 (Bad Gateway). The tool cannot see the back ends' certificates.",
		"Fix the back-end certificates, or set both Off explicitly to keep 2.2's (insecure) behaviour.", "upgrade §2.2, §7.2"},
	{"DIR-24", Warning, "DavLockDBFormat", "The DavLockDB file format changed",
		"mod_dav_fs's lock database format changed on systems with inodes.",
		"Delete the old lock database files while the server is stopped, before starting 2.4.", "upgrade §2.2"},

	// Other behaviour (upgrade document §2.3, §8).
	{"BEH-01", Warning, "SCGIPathInfo", "mod_proxy_scgi's PATH_INFO default changed",
		"mod_proxy_scgi no longer sends PATH_INFO by default; applications that read it break.",
		"Set the variable proxy-scgi-pathinfo (for example 'SetEnv proxy-scgi-pathinfo On') to restore it.", "upgrade §2.3"},
	{"BEH-02", Warning, "SubstituteLineLength", "mod_substitute's maximum line length is 1MB",
		"mod_substitute refuses lines longer than 1MB in 2.4 and the response fails.",
		"Make sure substituted responses have no line over 1MB (2.4.11 and later: SubstituteMaxLineLength).", "upgrade §2.3, §8"},
	{"BEH-03", Warning, "ReqtimeoutDefaults", "mod_reqtimeout sets default timeouts when loaded",
		"Loaded without RequestReadTimeout, 2.4's mod_reqtimeout applies its defaults (2.4 docs: header=20-40,MinRate=500 body=20,MinRate=500); 2.2's did nothing. Slow clients and slow uploads get 408.",
		"Write the RequestReadTimeout you want (RequestReadTimeout header=0 body=0 turns it off).", "upgrade §2.3, §8"},
	{"BEH-04", Info, "DeflateSkipsSmall", "mod_deflate skips compression that would not pay",
		"mod_deflate leaves a response uncompressed when it knows the overhead exceeds the data.",
		"Nothing to change; tests that expect every response compressed must allow it.", "upgrade §2.3"},
	{"BEH-05", Info, "AutoindexXHTML", "mod_autoindex reads titles of .xhtml files",
		"With ScanHTMLTitles, mod_autoindex now extracts titles and shows descriptions for .xhtml files, which 2.2 ignored.",
		"Nothing to change; listings may show new descriptions.", "upgrade §2.3"},
	{"BEH-06", Error, "SSLv2Removed", "SSLv2 is no longer supported",
		"SSLv2 is gone in 2.4: naming it in SSLProtocol is refused at start-up ('SSLv2 is no longer supported').",
		"Remove SSLv2 from the protocol list.", "upgrade §2.3"},
	{"BEH-07", Warning, "PipedLogShell", "Piped log commands run without a shell",
		"A piped log ('|command') is executed directly in 2.4; 2.2 ran it through /bin/sh -c, so shell syntax (redirections, pipes, variables, quotes, ;) no longer works.",
		"Prefix the command with '|$' to keep the shell, or write it without shell syntax.", "upgrade §2.3"},
	{"BEH-08", Info, "HtpasswdMD5", "htpasswd uses MD5 by default",
		"2.4's htpasswd writes MD5 ($apr1$) hashes by default on every platform; 2.2 on Unix wrote crypt(3). Existing entries keep working.",
		"Nothing to change; consider re-hashing crypt entries (crypt only uses 8 characters of a password), for example with htpasswd -B.", "upgrade §2.3"},
	{"BEH-09", Error, "RewriteLogRemoved", "RewriteLog and RewriteLogLevel are removed",
		"RewriteLog and RewriteLogLevel are gone in 2.4 ('Invalid command' at start-up); mod_rewrite logs to the error log under LogLevel rewrite:traceN.",
		"Replace them with 'LogLevel rewrite:traceN'.", "upgrade §2.3"},
	{"BEH-10", Warning, "ErrorDocumentSSI", "Error documents processed by mod_include need review",
		"Error documents served through mod_include (such as 2.2's multi-language error pages) use '#if expr', which 2.4 parses with the new expression parser. The upgrade document does not show the details; the tool does not read the documents.",
		"Use 2.4's error documents, or write 'SSILegacyExprParser on' in the directory that holds them.", "upgrade §2.3"},

	// Authorization (upgrade document §5).
	{"AUTH-01", Info, "HostRulesAreRequire", "Host and address checks are Require rules of mod_authz_host",
		"Access by client host name or address is a Require rule of mod_authz_host in 2.4 (Require ip, Require host); Allow/Deny from hosts work only through mod_access_compat.",
		"Use Require ip / Require host (Require not ... inside <RequireAll> for Deny).", "upgrade §5.1.1"},
	{"AUTH-02", Info, "OldDirectivesOnly", "A configuration with only the old directives works under mod_access_compat",
		"A configuration that uses only Order, Allow, Deny and Satisfy keeps working on 2.4 when mod_access_compat is loaded.",
		"Load mod_access_compat and migrate later, or migrate every scope at once.", "upgrade §5.1.2"},
	{"AUTH-03", Warning, "MixedInScope", "A scope mixes old and new access directives",
		"Mixing Order/Allow/Deny/Satisfy with 2.4 Require forms is possible but discouraged: two layers decide, compat first, and their combination is easy to misread.",
		"Migrate the whole scope to Require, or keep only the old directives.", "upgrade §5.1.3"},
	{"AUTH-04", Info, "RequireContainers", "RequireAny/RequireAll/RequireNone decide how Require lines combine",
		"<RequireAny>, <RequireAll> and <RequireNone> decide how the Require lines in them combine and in which order they apply; AuthMerging decides how a section's Require combines with its parent's (default: it replaces it).",
		"Check that the combination is the intended one.", "upgrade §5.1.4"},
	{"AUTH-05", Error, "DBMGroup", "Require group must be Require dbm-group with mod_authz_dbm",
		"With mod_authz_dbm, 2.4's 'Require group' is mod_authz_groupfile's provider and does not read AuthDBMGroupFile: the groups are not found and members are refused.",
		"Write 'Require dbm-group ...'.", "upgrade §5.1.5"},
	{"AUTH-06", Error, "MixedInMerge", "Old and new access directives meet in a merge",
		"In 2.4 the mod_access_compat layer (Order/Allow/Deny/Satisfy) and the Require layer inherit independently and are evaluated in that order (compat first; under Satisfy All both must pass): a section that sets only one layer cannot undo what an enclosing section's other layer refuses. This is what the upgrade document calls 'mod_access_compat takes precedence'.",
		"Set both layers in the section, or migrate both sections to Require.", "upgrade §5.1.6, §5.3; apache-access-semantics.md §3.3, §9.3"},

	// Errors (upgrade document §7).
	{"ERR-01", Warning, "UserNeedsUnixd", "User and Group need mod_unixd",
		"User and Group are mod_unixd's in 2.4; where mod_unixd is a shared module (upstream's default build) and not loaded, start-up fails with \"Invalid command 'User'\". Debian's apache2 compiles mod_unixd in (apache2 -l), and there loading it again is itself an error.",
		"On a build with a shared mod_unixd, add 'LoadModule unixd_module modules/mod_unixd.so'.", "upgrade §7.1"},
	{"ERR-02", Error, "AccessNeedsModule", "Access directives need mod_access_compat / mod_authz_core",
		"Order, Allow, Deny and Satisfy are mod_access_compat's in 2.4 and Require is mod_authz_core's; without the module, start-up fails with \"Invalid command 'Order'\" (or 'Require').",
		"Load mod_access_compat (and mod_authz_core), or migrate to the 2.4 directives.", "upgrade §7.1"},
	{"ERR-03", Error, "FilterNeedsModFilter", "AddOutputFilterByType needs mod_filter",
		"AddOutputFilterByType is mod_filter's in 2.4; without it start-up fails with \"Invalid command 'AddOutputFilterByType'\".",
		"Add 'LoadModule filter_module modules/mod_filter.so'.", "upgrade §7.1"},
	{"ERR-04", Error, "AuthNeedsAuthnCore", "Authentication needs mod_authn_core",
		"AuthType, AuthName and <AuthnProviderAlias> are mod_authn_core's in 2.4: without it start-up fails with \"Invalid command 'AuthType'\", and a Require that needs a user answers 500 ('AH00025: configuration error: couldn't check user').",
		"Add 'LoadModule authn_core_module modules/mod_authn_core.so'.", "upgrade §7.1"},
	{"ERR-05", Info, "DeniedLogLine", "A denied client gets 403 and an AH01797 log line",
		"A client refused by Order/Allow/Deny gets 403 and the error log line '[access_compat:error] ... [client ip:port] AH01797: client denied by server configuration: <path>' (2.2: '[error] [client ip] client denied by server configuration: <path>').",
		"Update log parsers and fail2ban filters for the new format.", "upgrade §7.2"},

	// orderly's own checks, beyond the catalogue.
	{"ORD-01", Error, "LayerMadeDead", "In one scope, one access layer makes the other's directives dead",
		"Within one section the compat layer runs first: under Satisfy All a compat layer that refuses everybody makes every Require grant dead (403 AH01797), and under Satisfy Any a compat layer that admits everybody makes the Require lines dead (never evaluated).",
		"Keep one layer in the scope: migrate it to Require.", "apache-access-semantics.md §3.3, §9.2"},
	{"ORD-02", Error, "RequireLinesOr", "2.2 Require lines for users and groups are OR-ed in 2.4",
		"In 2.2 'Require user/valid-user' and 'Require group' in one scope were read module by module, and the group module refused users outside the group; 2.4 grants when any Require line matches.",
		"Write <RequireAll> around the lines that must all hold, or keep only the group line.", "apache-access-semantics.md §9.2, §11.9"},
	{"ORD-03", Error, "OptionsMixed", "Options mixes +/- with plain values",
		"2.4 refuses an Options line where some values start with + or - and others do not ('Either all Options must start with + or -, or no Option may.'): at start-up, or as a 500 in .htaccess.",
		"Prefix every value with + or -, or none.", "httpd 2.4 core.c set_options"},
	{"ORD-04", Error, "HtaccessModuleMissing", "An .htaccess directive's module is not loaded",
		"An .htaccess file is read per request; a directive whose 2.4 module is not loaded makes every request below it answer 500 (apache2 -t does not see it).",
		"Load the module, or migrate the directive.", "httpd 2.4 .htaccess handling"},
	{"ORD-05", Error, "NoMPM", "No MPM is loaded",
		"2.4 loads its MPM as a module; a 2.2 configuration loads none ('AH00534: Configuration error: No MPM loaded').",
		"Add 'LoadModule mpm_event_module modules/mod_mpm_event.so' (or mpm_worker/mpm_prefork).", "httpd 2.4 MPM modules"},
	{"ORD-06", Error, "ModuleBuiltIn", "LoadModule of a module compiled into Debian's apache2",
		"Debian's apache2 compiles core, mod_so, mod_watchdog, http_core, mod_log_config, mod_logio, mod_version and mod_unixd in; loading one again stops start-up ('module ... is built-in and can't be loaded').",
		"Remove the LoadModule line (keep it only for a build where the module is shared).", "apache2 -l on Debian"},
	{"ORD-07", Error, "HtaccessUnparsable", "An .htaccess file does not parse",
		"Apache answers 500 for every request below an .htaccess file it cannot parse; the tool could not check its directives.",
		"Fix the file.", "httpd .htaccess handling"},
	{"ORD-08", Info, "ModuleChecksSkipped", "No LoadModule line: module checks skipped",
		"The configuration loads no module (a conf.d-style fragment), so the tool cannot tell which modules 2.4 will have: BLD-01/02/03, ERR-01..04, ORD-04, ORD-05 and the global defaults (DIR-05, DIR-06) were not checked.",
		"Lint the whole configuration (httpd.conf) to get these checks.", "orderly"},
	{"ORD-09", Error, "SatisfyResetsCompat", "Satisfy alone in a section resets the inherited Order/Allow/Deny in 2.4",
		"In 2.4 Satisfy is part of mod_access_compat's configuration: a section with Satisfy but no Order/Allow/Deny starts from an empty one (everybody allowed) and drops the inherited Deny; in 2.2 Satisfy lived in the core and the Deny was kept.",
		"Repeat the inherited Order/Allow/Deny lines in the section, or migrate to Require.", "apache-access-semantics.md §4.4, §11.3"},
	{"ORD-10", Error, "SatisfyAnyNoRequire", "Satisfy Any with a refusing Order/Allow/Deny and no Require",
		"With Satisfy Any, a compat layer that refuses the client and no Require in force, 2.2 answered 403 and 2.4 answers 200 (mod_authz_core grants when it has no directives).",
		"Add the Require the scope needs, or remove Satisfy Any.", "apache-access-semantics.md §9.2, §11.4"},
	{"ORD-11", Error, "AuthTypeNoRequire", "AuthType without any Require",
		"2.4 answers 500 ('AH01627: AuthType configured with no corresponding authorization directives') where AuthType is set and no Require is in force; 2.2 served without authentication.",
		"Add the Require (for example Require valid-user), or remove AuthType.", "apache-access-semantics.md §8, §11.8"},
	{"ORD-12", Info, "SSLv2Cipher", "SSLCipherSuite names SSLv2",
		"The cipher list names SSLv2, which 2.4 with a current OpenSSL does not have: the entry has no effect.",
		"Remove the SSLv2 entry.", "upgrade §2.3"},
	{"ORD-13", Info, "PathNotReadable", "A document root or directory is not readable here",
		"The tool reads .htaccess files from the disk; this path does not exist or cannot be read on this machine, so .htaccess files under it (and DIR-04 for them) could not be checked.",
		"Run the lint where the document roots are, or check the .htaccess files by hand.", "orderly"},
	{"ORD-14", Error, "ServeRefuses", "orderly serve refuses this directive",
		"orderly serve (and orderly check) refuse it, in Apache's words where Apache refuses it too: a name Apache does not know or whose module is not loaded, a directive outside its contexts, a bad argument, or a directive that can refuse, redirect, limit or change a request and that orderly does not evaluate. In an .htaccess file, orderly answers 500 for its directory and below.",
		"Fix the directive; for one orderly does not evaluate, let the backend enforce it with legacy.forward_unfaithful = true, or remove it.", "orderly check"},
}

// Rules returns every rule orderly lint knows, in table order.
func Rules() []Rule {
	out := make([]Rule, len(rules))
	copy(out, rules)
	return out
}

var ruleIndex = func() map[string]int {
	m := make(map[string]int, len(rules))
	for i, r := range rules {
		if _, dup := m[r.ID]; dup {
			panic("lint: duplicate rule " + r.ID)
		}
		m[r.ID] = i
	}
	return m
}()

// RuleByID returns the rule with the given ID.
func RuleByID(id string) (Rule, bool) {
	i, ok := ruleIndex[id]
	if !ok {
		return Rule{}, false
	}
	return rules[i], true
}
