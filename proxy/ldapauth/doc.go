// Package ldapauth authenticates and authorizes as Apache's
// mod_authnz_ldap over mod_ldap do, so that orderly decides LDAP-protected
// locations exactly as Apache would.
//
// # What it follows
//
// The Apache code read, function by function (httpd 2.4.x and trunk,
// which Debian's 2.4.71 matches, and 2.2.x; apr-util 1.6):
//
//   - [ParseURL]: mod_auth_ldap_parse_url over apr_ldap_url_parse
//     (apr_ldap_url.c), with its in-place hex unescaping, the host list kept
//     with its ports ("h1 h2:3389"), scope one/sub (base is sub), the filter
//     stripped of its first and last character, and apr's error messages.
//   - [Config] and [Config.Apply]: create_authnz_ldap_dir_config and the
//     directive handlers (set_bind_password, mod_auth_ldap_set_deref, the
//     group attribute limits, atol for AuthLDAPMaxSubGroupDepth).
//   - [Client.Authenticate] / [Client.CheckPassword]: authn_ldap_check_password
//     and uldap_cache_checkuserid, authn_ldap_build_filter.
//   - [Client.Authorize]: ldapuser_, ldapgroup_, ldapdn_, ldapattribute_,
//     ldapfilter_ and ldapsearch_check_authorization, get_dn_for_nonldap_authn,
//     get_connection_for_authz; uldap_cache_compare, uldap_cache_comparedn,
//     uldap_cache_getuserdn, uldap_cache_check_subgroups, uldap_get_subgroups.
//   - [Client.Authorize22]: 2.2's authz_ldap_check_user_access.
//   - The caches: util_ldap_cache_mgr.c (util_ald_cache_insert and its purge)
//     with the lookup rules of each cache in util_ldap.c.
//   - Connections: uldap_connection_find/open (rebinding a pooled connection
//     when the credentials differ), the start_over retry loops
//     (LDAPRetries), libldap's ldap_url_parsehosts and its fail-over over
//     the host list.
//   - [ServerConfig] and [ServerConfig.Apply]: mod_ldap's server
//     configuration (util_ldap_create_config) and its directive handlers
//     (util_ldap_set_*: atol and strtol as they read, GLOBAL_ONLY,
//     ap_timeout_parameter_parse for [TimeoutParameter]);
//     [CheckDirDirective] its per-directory ones. [ServerConfig.Options]
//     makes a Client's [Options] of it, with what apr-util's
//     apr_ldap_set_option gives OpenLDAP of the LDAPTrustedGlobalCert
//     lines (the last CA_BASE64 file); [Client.WithServer] is a virtual
//     host's connection pool over the one cache (util_ldap_merge_config,
//     util_ldap_post_config).
//
// # Outcomes
//
// Authentication gives AUTH_GRANTED, AUTH_DENIED (wrong password, and any
// LDAP "security" error 47-50 or constraint violation, so also a wrong
// AuthLDAPBindPassword), AUTH_USER_NOT_FOUND (no entry, two or more
// entries, a base DN that does not exist, any failure when
// AuthLDAPBindAuthoritative is off) or AUTH_GENERAL_ERROR (server down,
// bad filter, anything else: a 500). An empty password is denied before
// any LDAP operation (2.4). A user and password that bound before are
// granted from the search cache for LDAPCacheTTL without asking the server,
// even while it is down, as Apache does.
//
// The ldap-* authorization providers never return AUTHZ_GENERAL_ERROR:
// every LDAP failure is AUTHZ_DENIED, hence a 401, and [Client.Authorize]
// returns the failure beside the decision for the log.
//
// # Apache 2.4 and 2.2
//
//   - 2.2 has no Require ldap-search, no nested groups (AuthLDAPSubGroup*,
//     AuthLDAPMaxSubGroupDepth), no AuthLDAPInitialBindAsUser/Pattern,
//     AuthLDAPSearchAsUser, AuthLDAPCompareAsUser, AuthLDAPAuthorizePrefix,
//     no "none" URL filter; it has AuthzLDAPAuthoritative.
//   - 2.2 decides every ldap-* line in one hook that runs before
//     mod_authz_user: OK, 401, or DECLINED when not authoritative. With
//     AuthzLDAPAuthoritative on, "Require valid-user" beside a failing
//     ldap-* line still ends in 401. 2.4 decides each line as a provider
//     of mod_authz_core (RequireAny by default).
//   - 2.2 does not refuse an empty password up front: it searches first,
//     so an unknown user with an empty password is "not found", and an
//     empty password with the server down is a 500 (2.4: 401).
//   - 2.2 re-searches the user's DN only when mod_authnz_ldap was not asked
//     to authenticate; after a failed LDAP attempt and a successful later
//     provider it fails every DN-based check. 2.4 (2.4.63 and later,
//     Debian's 2.4.71) searches r->user's DN again in that case.
//     Neither version checks that the user came from LDAP.
//   - In "ldap-user" 2.2 keeps comparing the words of the line after an
//     empty one; 2.4 stops at the first empty word.
//   - 2.2 cuts a filter longer than 8191 bytes short (the LDAP library then
//     refuses it: a 500); 2.4 refuses it itself (also a 500, or a denial
//     in authorization).
//   - The default group attributes are member and uniqueMember (2.2:
//     "uniquemember"; LDAP does not care).
//
// # Where this package knowingly differs
//
//   - Apache's DN-compare cache (AuthLDAPCompareDNOnServer on) is keyed by
//     the required DN alone and never expires by TTL: once one user matched
//     "Require ldap-dn X", every later user is granted X by the cache. The
//     oracle test shows it with Apache 2.4.71. This package keys the cache
//     by both DNs, so it denies those users.
//   - AuthLDAPCompareDNOnServer defaults to off, as Apache's code does in
//     2.2 and 2.4 (the manual says on).
//   - Passwords in the search cache are kept as keyed hashes, not in the
//     clear as Apache keeps them.
//   - AuthLDAPInitialBindPattern is a Go regexp, not PCRE.
//   - AuthLDAPCharsetConfig (transcoding user names and passwords by
//     Accept-Language) is not implemented, and referrals are not chased
//     (LDAPReferrals): an answer with a referral fails as Apache's does
//     under LDAPReferrals Off.
//   - A filter byte that is not UTF-8 is sent hex-escaped (go-ldap refuses
//     raw ones); libldap sends it as it is. The server sees the same value.
//   - An LDAPS handshake is bounded by LDAPConnectionTimeout. Apache
//     2.4.71 with OpenLDAP 2.5 waits for one without bound, whatever
//     LDAPConnectionTimeout and LDAPTimeout say (internal/differential's
//     TestLDAPTimeoutSettings: more than 90 s against a server that never
//     answers); both refuse the request, orderly with a 500.
//   - No client certificate is presented (LDAPTrustedGlobalCert CERT_* and
//     KEY_*, LDAPTrustedClientCert): translate refuses those lines, and
//     the certificate types OpenLDAP does not take, at load.
//   - A trusted CA file is read once, when the Client is made (Apache's
//     libldap reads it when it makes its TLS context, at the first TLS
//     connection of each child): a file changed later is read again
//     after a reload.
//
// mod_authnz_ldap has no merge function: a section that uses any of its
// directives starts from the defaults, without the enclosing section's
// AuthLDAPURL or bind DN; [Config] holds one section's settings.
//
// Credentials are never logged and never part of an error.
//
// # The LDAP client
//
// The caches' counters (hits, misses, inserts, removes, purges, what the
// ldap-status handler shows, util_ald_cache_display_stats) are
// [Client.CacheStats]; [Counters] shared by the clients of successive
// configurations keep them growing across reloads.
//
// The client library is github.com/go-ldap/ldap/v3, the maintained and
// widely used pure-Go LDAP client (no cgo, so no libldap to link): it
// gives simple binds with empty passwords allowed (to send what libldap
// sends), compare, search with alias dereferencing, StartTLS and LDAPS
// over connections this package dials itself (for libldap's fail-over
// over a host list and LDAPConnectionTimeout).
//
// Package ldaptest runs a real OpenLDAP slapd with a test directory for
// this package's tests and for other packages' differential tests.
package ldapauth
