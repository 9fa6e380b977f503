package translate

import "strings"

// Override bits (include/http_config.h): which AllowOverride category a
// directive needs in an .htaccess file.
const (
	OrLimit    uint16 = 1
	OrOptions  uint16 = 2
	OrFileInfo uint16 = 4
	OrAuthCfg  uint16 = 8
	OrIndexes  uint16 = 16
	OrUnset    uint16 = 32  // AllowOverride never set: .htaccess is read, nothing is allowed (2.4)
	accessConf uint16 = 64  // <Directory> context only: never in .htaccess
	rsrcConf   uint16 = 128 // server context only: never in .htaccess
	OrAll             = OrLimit | OrOptions | OrFileInfo | OrAuthCfg | OrIndexes
)

// unfaithful are directives that take part in Apache's mapping of a URL
// to a file or in its access decision in ways orderly does not evaluate.
// Where one appears, orderly cannot promise Apache's answer: by default it
// refuses to start; with legacy.forward_unfaithful it loads, ignores the
// directive and says so (the backend must then enforce it).
var unfaithful = map[string]string{
	"rewritemap":            "mod_rewrite can change the file name or deny; orderly decides on the URL as written",
	"sslrequire":            "SSLRequire is mod_ssl's access check by an expression (2.2's ssl_expr, 2.4's ap_expr in its SSL compatibility mode), a language orderly does not evaluate; SSLRequireSSL, SSLVerifyClient, SSLOptions and SSLUserName are evaluated",
	"allowmethods":          "AllowMethods (mod_allowmethods) refuses methods before access control; orderly does not evaluate it",
	"userdir":               "mod_userdir maps /~user URLs to home directories; orderly does not",
	"virtualdocumentroot":   "mod_vhost_alias maps URLs to files by host name; orderly does not",
	"virtualdocumentrootip": "mod_vhost_alias maps URLs to files by address; orderly does not",
	"checkspelling":         "mod_speling maps misspelled URLs to other files; orderly does not",
	"proxypass":             "a proxied path maps to no file: Apache applies only <Location> sections there, and orderly does not model mod_proxy",
	"proxypassmatch":        "a proxied path maps to no file: Apache applies only <Location> sections there, and orderly does not model mod_proxy",
	"luahookaccesschecker":  "mod_lua access hooks are not evaluated by orderly",
	"authbasicfake":         "AuthBasicFake replaces the Authorization header in fixups, and mod_dir's index subrequests then authenticate with the fake user; orderly does not evaluate it",
	"luahookauthchecker":    "mod_lua access hooks are not evaluated by orderly",
	"luahookcheckuserid":    "mod_lua access hooks are not evaluated by orderly",
	"luahooktranslatename":  "mod_lua can change the file name; orderly does not evaluate it",
	"luahookmaptostorage":   "mod_lua can change the file name; orderly does not evaluate it",
	"scriptaliasmatch":      "",
	"authzprovideralias":    "provider aliases are not evaluated by orderly",
}

// stockModules are the modules Apache 2.2 and 2.4 ship (2.2 names
// included). Any other LoadModule is a third-party module, whose hooks
// orderly cannot know.
var stockModules = map[string]bool{}

func init() {
	for _, m := range strings.Fields(`access_compat actions alias allowmethods asis auth_basic auth_digest auth_form
	authn_alias authn_anon authn_core authn_dbd authn_dbm authn_default authn_file authn_socache authnz_fcgi authnz_ldap
	authz_core authz_dbd authz_dbm authz_default authz_groupfile authz_host authz_owner authz_user autoindex brotli
	buffer cache cache_disk cache_socache case_filter case_filter_in cern_meta cgi cgid charset_lite data dav dav_fs
	dav_lock dbd deflate dialup dir disk_cache dumpio echo env expires ext_filter file_cache filter headers heartbeat
	heartmonitor http2 ident imagemap include info lbmethod_bybusyness lbmethod_byrequests lbmethod_bytraffic
	lbmethod_heartbeat ldap log_config log_debug log_forensic logio lua macro md mem_cache mime mime_magic mpm_event
	mpm_prefork mpm_worker negotiation proxy proxy_ajp proxy_balancer proxy_connect proxy_express proxy_fcgi
	proxy_fdpass proxy_ftp proxy_hcheck proxy_html proxy_http proxy_http2 proxy_scgi proxy_uwsgi proxy_wstunnel
	ratelimit reflector remoteip reqtimeout request rewrite sed session session_cookie session_crypto session_dbd
	setenvif slotmem_plain slotmem_shm so socache_dbm socache_memcache socache_redis socache_shmcb speling ssl status
	substitute suexec unique_id unixd userdir usertrack version vhost_alias watchdog xml2enc`) {
		stockModules[m+"_module"] = true
	}
	delete(unfaithful, "scriptaliasmatch")
}
