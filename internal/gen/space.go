package gen

import (
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// The directive space: which modules a wide configuration may load, which
// directives of the table it may write, and with what arguments.

// ExtraModules are the modules a wide configuration may add to the
// oracle's, by name (its modules file: the oracle, the backend and orderly
// load them). Each loads on its own in Debian's Apache 2.4 and does
// nothing to a request until a directive asks it to; the modules that
// would change the harness itself (mod_proxy, mod_ssl, mod_userdir,
// mod_unique_id, the caches, LDAP, DBD) are left out, and their
// directives are drawn only as directives of a module not loaded.
var ExtraModules = []string{
	"actions", "allowmethods", "asis", "auth_digest", "authn_anon", "authz_owner",
	"autoindex", "buffer", "cern_meta", "cgi", "charset_lite", "data", "deflate",
	"dialup", "expires", "ext_filter", "filter", "headers", "imagemap", "include",
	"info", "log_debug", "macro", "mime_magic", "negotiation", "ratelimit",
	"reflector", "reqtimeout", "request", "rewrite", "sed", "speling", "status",
	"substitute", "usertrack",
}

// builtinModules are compiled into Debian's apache2 (apache2 -l), with
// "mpm" standing for the multi-processing module's directives.
var builtinModules = []string{"core_module", "so_module", "watchdog_module", "http_module",
	"log_config_module", "logio_module", "version_module", "unixd_module", "mpm"}

// LoadedModules returns the identifiers of the modules the oracle loads
// for a case with the extra modules mods (apachetest's own, the case's,
// and those compiled in).
func LoadedModules(mods []string) map[string]bool {
	loaded := make(map[string]bool)
	for _, m := range (apachetest.Layout{Modules: mods}).OracleOptions().LoadedModules() {
		loaded[m] = true
	}
	for _, m := range builtinModules {
		loaded[m] = true
	}
	return loaded
}

// moduleName is the name of module identifier id for a modules file
// ("expires_module" -> "expires").
func moduleName(id string) string { return strings.TrimSuffix(id, "_module") }

// Loadable reports whether the module with identifier id is one a case
// may load (apachetest's, an extra module, or compiled in).
func Loadable(id string) bool {
	return LoadedModules(nil)[id] || slices.Contains(ExtraModules, moduleName(id))
}

// unsafeDirectives are never written, in any construct: they would change
// the harness rather than the request (where the servers listen, run,
// log, which processes they have, where a client's address comes from,
// which modules and files they read), or need what a test machine must
// not do. Lower case.
var unsafeDirectives = map[string]bool{}

func init() {
	for _, n := range []string{
		// Where and how the server runs.
		"listen", "listenbacklog", "listencoresbucketsratio", "serverroot", "pidfile",
		"user", "group", "chrootdir", "suexec", "defaultruntimedir", "mutex",
		"scoreboardfile", "coredumpdirectory", "gprofdir", "servername", "maxmemfree",
		"enableexceptionhook", "watchdoginterval", "serverlimit", "threadlimit",
		"keepalive", "keepalivetimeout", "maxkeepaliverequests", "timeout",
		"receivebuffersize", "sendbuffersize", "readbuffersize", "maxconnectionsperchild",
		"maxrequestsperchild", "threadstacksize", "authdigestshmemsize",
		// Logs the harness reads.
		"errorlog", "errorlogformat", "customlog", "transferlog", "logformat",
		"bufferedlogs", "globallog", "cookielog", "scriptlog", "scriptloglength",
		"scriptlogbuffer", "forensiclog", "dumpioinput", "dumpiooutput",
		// What is read, and from where.
		"include", "includeoptional", "loadmodule", "loadfile", "typesconfig",
		"mimemagicfile", "serverpath",
		// The client's address comes from X-Forwarded-For (mod_remoteip).
		"remoteipheader", "remoteipinternalproxy", "remoteipinternalproxylist",
		"remoteiptrustedproxy", "remoteiptrustedproxylist", "remoteipproxiesheader",
		"remoteipproxyprotocol", "remoteipproxyprotocolexceptions",
		// Preprocessor and read-time directives: constructs of their own.
		"define", "undefine", "use", "undefmacro", "error",
	} {
		unsafeDirectives[n] = true
	}
	for _, r := range directive.All() {
		if r.Module == "mpm" || r.Module == "remoteip_module" || r.Module == "unixd_module" {
			unsafeDirectives[strings.ToLower(r.Name)] = true
		}
	}
}

// Unsafe reports whether the generator never writes the directive name.
func Unsafe(name string) bool { return unsafeDirectives[strings.ToLower(name)] }
