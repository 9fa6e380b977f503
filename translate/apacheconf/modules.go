package apacheconf

import (
	"path/filepath"
	"strings"
)

// builtinModules are the modules compiled into Debian's apache2 2.4
// ("apache2 -l"), by source name and by identifier. <IfModule> accepts both.
var builtinModules = []string{
	"core.c", "mod_so.c", "mod_watchdog.c", "http_core.c",
	"mod_log_config.c", "mod_logio.c", "mod_version.c", "mod_unixd.c",
	"core_module", "so_module", "watchdog_module", "http_module",
	"log_config_module", "logio_module", "version_module", "unixd_module",
}

// builtinModules22 are those of Debian's apache2 2.2, but for its MPM
// (apache2-mpm-prefork and apache2-mpm-worker were two builds): no
// mod_version, which was loaded as a module.
var builtinModules22 = []string{
	"core.c", "mod_so.c", "http_core.c", "mod_log_config.c", "mod_logio.c",
	"core_module", "so_module", "http_module", "log_config_module", "logio_module",
}

// sourceNames are the source names of the modules shipped with httpd 2.4
// that are not mod_NAME.c for NAME_module (checked against Debian's
// apache2 2.4 with LoadModule and <IfModule>).
var sourceNames = map[string]string{
	"ldap_module":        "util_ldap.c",
	"mpm_event_module":   "event.c",
	"mpm_prefork_module": "prefork.c",
	"mpm_worker_module":  "worker.c",
}

// sourceName returns the source file name ("mod_rewrite.c") of the module
// with identifier id ("rewrite_module") loaded from file
// ("modules/mod_rewrite.so"), or "" if it cannot tell. httpd takes it from
// the module itself (its __FILE__); this guesses it from the names.
func sourceName(id, file string) string {
	if s, ok := sourceNames[id]; ok {
		return s
	}
	base := filepath.Base(file)
	if strings.HasPrefix(base, "mod_") && strings.HasSuffix(base, ".so") {
		return strings.TrimSuffix(base, ".so") + ".c"
	}
	if x, ok := strings.CutSuffix(id, "_module"); ok && x != "" {
		return "mod_" + x + ".c"
	}
	return ""
}

// moduleID returns the identifier of the module with source name src, or
// "" if it cannot tell.
func moduleID(src string) string {
	for id, s := range sourceNames {
		if s == src {
			return id
		}
	}
	if x, ok := strings.CutPrefix(src, "mod_"); ok {
		if x, ok := strings.CutSuffix(x, ".c"); ok && x != "" {
			return x + "_module"
		}
	}
	return ""
}

// otherName returns the identifier of the module with source name name,
// or the source name of the module with identifier name ("" if unknown).
func otherName(name string) string {
	if strings.HasSuffix(name, ".c") {
		return moduleID(name)
	}
	return sourceName(name, "")
}
