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

// directiveInfo is where a directive comes from and where it is allowed.
type directiveInfo struct {
	module   string // the module identifier, "" for core
	override uint16 // req_override
}

// directives lists the directives of the modules a stock Apache 2.4 ships
// that orderly meets in .htaccess files, with the module that provides
// each and its req_override, from each module's command table in httpd's
// source. A directive missing here is "Invalid command" in an .htaccess
// file: orderly answers 500 for it, failing closed.
var directives = map[string]directiveInfo{
	// core
	"acceptpathinfo": {"", OrFileInfo}, "adddefaultcharset": {"", OrFileInfo},
	"cgipassauth": {"", OrAuthCfg}, "contentdigest": {"", OrOptions},
	"defaulttype": {"", OrFileInfo}, "enablemmap": {"", OrFileInfo},
	"enablesendfile": {"", OrFileInfo}, "errordocument": {"", OrFileInfo},
	"fileetag": {"", OrFileInfo}, "forcetype": {"", OrFileInfo},
	"sethandler": {"", OrFileInfo}, "setinputfilter": {"", OrFileInfo},
	"setoutputfilter": {"", OrFileInfo}, "options": {"", OrOptions},
	"serversignature": {"", OrAll}, "limitrequestbody": {"", OrAll},
	"limitxmlrequestbody": {"", OrAll}, "rlimitcpu": {"", OrAll},
	"rlimitmem": {"", OrAll}, "rlimitnproc": {"", OrAll},
	"files": {"", OrAll}, "filesmatch": {"", OrAll}, "if": {"", OrAll},
	"elseif": {"", OrAll}, "else": {"", OrAll},
	"limit": {"", OrLimit | OrAuthCfg}, "limitexcept": {"", OrLimit | OrAuthCfg},
	"allowoverride": {"", accessConf}, "allowoverridelist": {"", accessConf},
	"directory": {"", rsrcConf}, "directorymatch": {"", rsrcConf},
	"location": {"", rsrcConf}, "locationmatch": {"", rsrcConf},
	"virtualhost": {"", rsrcConf}, "documentroot": {"", rsrcConf},
	"servername": {"", rsrcConf}, "serveradmin": {"", rsrcConf},
	"serveralias": {"", rsrcConf}, "serverroot": {"", rsrcConf},
	"listen": {"", rsrcConf}, "include": {"", rsrcConf | accessConf},
	"includeoptional": {"", rsrcConf | accessConf}, "loglevel": {"", rsrcConf | accessConf},
	"errorlog": {"", rsrcConf}, "hostnamelookups": {"", rsrcConf | accessConf},
	"usecanonicalname": {"", rsrcConf | accessConf}, "accessfilename": {"", rsrcConf},
	"mergeslashes": {"", rsrcConf}, "allowencodedslashes": {"", rsrcConf},
	"keepalive": {"", rsrcConf}, "timeout": {"", rsrcConf}, "define": {"", rsrcConf},
	"user": {"unixd_module", rsrcConf}, "group": {"unixd_module", rsrcConf},
	// mod_access_compat
	"order": {"access_compat_module", OrLimit}, "allow": {"access_compat_module", OrLimit},
	"deny": {"access_compat_module", OrLimit}, "satisfy": {"access_compat_module", OrAuthCfg},
	// mod_authz_core, mod_authn_core, mod_authn_file, mod_authz_groupfile, mod_auth_basic
	"require": {"authz_core_module", OrAuthCfg}, "requireall": {"authz_core_module", OrAuthCfg},
	"requireany": {"authz_core_module", OrAuthCfg}, "requirenone": {"authz_core_module", OrAuthCfg},
	"authmerging": {"authz_core_module", OrAuthCfg}, "authzsendforbiddenonfailure": {"authz_core_module", OrAuthCfg},
	"authtype": {"authn_core_module", OrAuthCfg}, "authname": {"authn_core_module", OrAuthCfg},
	"authuserfile": {"authn_file_module", OrAuthCfg}, "authgroupfile": {"authz_groupfile_module", OrAuthCfg},
	"authbasicprovider": {"auth_basic_module", OrAuthCfg}, "authbasicauthoritative": {"auth_basic_module", OrAuthCfg},
	"authbasicfake": {"auth_basic_module", OrAuthCfg}, "authbasicusedigestalgorithm": {"auth_basic_module", OrAuthCfg},
	// mod_setenvif, mod_env
	"setenvif": {"setenvif_module", OrFileInfo}, "setenvifnocase": {"setenvif_module", OrFileInfo},
	"browsermatch": {"setenvif_module", OrFileInfo}, "browsermatchnocase": {"setenvif_module", OrFileInfo},
	"setenvifexpr": {"setenvif_module", OrFileInfo},
	"setenv":       {"env_module", OrFileInfo}, "unsetenv": {"env_module", OrFileInfo}, "passenv": {"env_module", OrFileInfo},
	// mod_alias
	"alias": {"alias_module", rsrcConf | accessConf}, "scriptalias": {"alias_module", rsrcConf | accessConf},
	"aliasmatch": {"alias_module", rsrcConf}, "scriptaliasmatch": {"alias_module", rsrcConf},
	"redirect": {"alias_module", OrFileInfo}, "redirectmatch": {"alias_module", OrFileInfo},
	"redirecttemp": {"alias_module", OrFileInfo}, "redirectpermanent": {"alias_module", OrFileInfo},
	// mod_dir
	"directoryindex": {"dir_module", OrIndexes}, "directoryslash": {"dir_module", OrIndexes},
	"directorycheckhandler": {"dir_module", OrIndexes}, "directoryindexredirect": {"dir_module", OrIndexes},
	"fallbackresource": {"dir_module", OrFileInfo},
	// mod_mime
	"addtype": {"mime_module", OrFileInfo}, "addencoding": {"mime_module", OrFileInfo},
	"addcharset": {"mime_module", OrFileInfo}, "addlanguage": {"mime_module", OrFileInfo},
	"addhandler": {"mime_module", OrFileInfo}, "addinputfilter": {"mime_module", OrFileInfo},
	"addoutputfilter": {"mime_module", OrFileInfo}, "removetype": {"mime_module", OrFileInfo},
	"removehandler": {"mime_module", OrFileInfo}, "removeencoding": {"mime_module", OrFileInfo},
	"removecharset": {"mime_module", OrFileInfo}, "removelanguage": {"mime_module", OrFileInfo},
	"removeinputfilter": {"mime_module", OrFileInfo}, "removeoutputfilter": {"mime_module", OrFileInfo},
	"defaultlanguage": {"mime_module", OrFileInfo}, "multiviewsmatch": {"mime_module", OrFileInfo},
	"typesconfig": {"mime_module", rsrcConf},
	// mod_rewrite, mod_headers, mod_expires, mod_filter, mod_autoindex, mod_negotiation
	"rewriteengine": {"rewrite_module", OrFileInfo}, "rewriteoptions": {"rewrite_module", OrFileInfo},
	"rewritebase": {"rewrite_module", OrFileInfo}, "rewritecond": {"rewrite_module", OrFileInfo},
	"rewriterule": {"rewrite_module", OrFileInfo},
	"header":      {"headers_module", OrFileInfo}, "requestheader": {"headers_module", OrFileInfo},
	"expiresactive": {"expires_module", OrIndexes}, "expiresbytype": {"expires_module", OrIndexes},
	"expiresdefault":        {"expires_module", OrIndexes},
	"addoutputfilterbytype": {"filter_module", OrFileInfo},
	"indexoptions":          {"autoindex_module", OrIndexes}, "indexignore": {"autoindex_module", OrIndexes},
	"headername": {"autoindex_module", OrIndexes}, "readmename": {"autoindex_module", OrIndexes},
	"adddescription": {"autoindex_module", OrIndexes}, "addicon": {"autoindex_module", OrIndexes},
	"indexorderdefault": {"autoindex_module", OrIndexes}, "indexstylesheet": {"autoindex_module", OrIndexes},
	"languagepriority": {"negotiation_module", OrFileInfo}, "forcelanguagepriority": {"negotiation_module", OrFileInfo},
}

// unfaithful are directives that take part in Apache's mapping of a URL
// to a file or in its access decision in ways orderly does not evaluate.
// Where one appears, orderly cannot promise Apache's answer: by default it
// refuses to start; with legacy.forward_unfaithful it loads, ignores the
// directive and says so (the backend must then enforce it).
var unfaithful = map[string]string{
	"rewriterule":           "mod_rewrite can change the file name or deny; orderly decides on the URL as written",
	"rewritecond":           "mod_rewrite can change the file name or deny; orderly decides on the URL as written",
	"rewritemap":            "mod_rewrite can change the file name or deny; orderly decides on the URL as written",
	"sslrequire":            "SSLRequire is an access check of mod_ssl that orderly does not evaluate",
	"allowmethods":          "AllowMethods (mod_allowmethods) refuses methods before access control; orderly does not evaluate it",
	"userdir":               "mod_userdir maps /~user URLs to home directories; orderly does not",
	"virtualdocumentroot":   "mod_vhost_alias maps URLs to files by host name; orderly does not",
	"virtualdocumentrootip": "mod_vhost_alias maps URLs to files by address; orderly does not",
	"checkspelling":         "mod_speling maps misspelled URLs to other files; orderly does not",
	"proxypass":             "a proxied path maps to no file: Apache applies only <Location> sections there, and orderly does not model mod_proxy",
	"proxypassmatch":        "a proxied path maps to no file: Apache applies only <Location> sections there, and orderly does not model mod_proxy",
	"authdbmuserfile":       "DBM password files are not read by orderly",
	"authdbmgroupfile":      "DBM group files are not read by orderly",
	"authdigestprovider":    "Digest authentication is not evaluated by orderly",
	"authldapurl":           "LDAP authentication is not evaluated by orderly",
	"luahookaccesschecker":  "mod_lua access hooks are not evaluated by orderly",
	"luahookauthchecker":    "mod_lua access hooks are not evaluated by orderly",
	"luahookcheckuserid":    "mod_lua access hooks are not evaluated by orderly",
	"luahooktranslatename":  "mod_lua can change the file name; orderly does not evaluate it",
	"luahookmaptostorage":   "mod_lua can change the file name; orderly does not evaluate it",
	"scriptaliasmatch":      "",
	"authnprovideralias":    "provider aliases are not evaluated by orderly",
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
