package lint

import (
	"path/filepath"
	"slices"
	"strings"
)

// stock24 are the shared objects of the stock Apache 2.4 server: those
// Debian's apache2 2.4 ships in /usr/lib/apache2/modules (checked by
// TestStockModulesMatchDebian), plus the stock modules Debian does not
// build (platform-specific or experimental ones).
var stock24 = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`
access_compat actions alias allowmethods asis auth_basic auth_digest auth_form
authn_anon authn_core authn_dbd authn_dbm authn_file authn_socache authnz_fcgi
authnz_ldap authz_core authz_dbd authz_dbm authz_groupfile authz_host authz_owner
authz_user autoindex brotli bucketeer buffer cache cache_disk cache_socache
case_filter case_filter_in cern_meta cgi cgid charset_lite data dav dav_fs
dav_lock dbd deflate dialup dir dumpio echo env expires ext_filter file_cache
filter headers heartbeat heartmonitor http2 ident imagemap include info
lbmethod_bybusyness lbmethod_byrequests lbmethod_bytraffic lbmethod_heartbeat
ldap log_debug log_forensic lua macro md mime mime_magic mpm_event mpm_prefork
mpm_worker negotiation proxy proxy_ajp proxy_balancer proxy_connect proxy_express
proxy_fcgi proxy_fdpass proxy_ftp proxy_hcheck proxy_html proxy_http proxy_http2
proxy_scgi proxy_uwsgi proxy_wstunnel ratelimit reflector remoteip reqtimeout
request rewrite sed session session_cookie session_crypto session_dbd setenvif
slotmem_plain slotmem_shm socache_dbm socache_memcache socache_redis
socache_shmcb speling ssl status substitute suexec unique_id userdir usertrack
vhost_alias xml2enc
` + /* stock, not built by Debian */ `
privileges isapi nw_ssl socache_dc policy firehose systemd tls mpm_winnt
mpm_netware mpmt_os2 example_hooks example_ipc optional_fn_export
optional_fn_import optional_hook_export optional_hook_import serf
`) {
		m["mod_"+n+".so"] = true
	}
	for _, n := range builtin24 {
		m["mod_"+strings.TrimSuffix(n, "_module")+".so"] = true
	}
	return m
}()

// builtin24 are the modules Debian's apache2 2.4 compiles in ("apache2
// -l"); loading one of them is an error there.
var builtin24 = []string{"core_module", "so_module", "watchdog_module", "http_module",
	"log_config_module", "logio_module", "version_module", "unixd_module"}

func isBuiltin(id string) bool { return slices.Contains(builtin24, id) }

// gone22 are the modules of the stock 2.2 server that 2.4 renamed or
// dropped, by shared object, with what replaces them.
var gone22 = map[string]struct{ id, fix string }{
	"mod_authn_alias.so":   {"authn_alias_module", "remove the line: <AuthnProviderAlias> is provided by mod_authn_core in 2.4 ('LoadModule authn_core_module modules/mod_authn_core.so')"},
	"mod_authn_default.so": {"authn_default_module", "remove the line: its job is done by mod_authn_core ('LoadModule authn_core_module modules/mod_authn_core.so')"},
	"mod_authz_default.so": {"authz_default_module", "remove the line: its job is done by mod_authz_core ('LoadModule authz_core_module modules/mod_authz_core.so')"},
	"mod_disk_cache.so":    {"disk_cache_module", "replace it with 'LoadModule cache_disk_module modules/mod_cache_disk.so' (renamed mod_cache_disk)"},
	"mod_mem_cache.so":     {"mem_cache_module", "remove the line: mod_mem_cache is gone; use mod_cache_disk, or mod_cache_socache with a socache provider (mod_socache_shmcb)"},
	"mod_example.so":       {"example_module", "remove the line or load mod_example_hooks (renamed)"},
}

// thirdParty names the 2.4 packages or stock modules for common 2.2
// third-party modules.
var thirdParty = map[string]string{
	"php5_module":      "Debian's libapache2-mod-php (PHP 8), or PHP-FPM through mod_proxy_fcgi",
	"php4_module":      "Debian's libapache2-mod-php (PHP 8), or PHP-FPM through mod_proxy_fcgi",
	"wsgi_module":      "Debian's libapache2-mod-wsgi-py3",
	"python_module":    "mod_wsgi (Debian's libapache2-mod-wsgi-py3): mod_python is unmaintained",
	"perl_module":      "Debian's libapache2-mod-perl2",
	"security2_module": "Debian's libapache2-mod-security2",
	"fcgid_module":     "Debian's libapache2-mod-fcgid",
	"fastcgi_module":   "the stock mod_proxy_fcgi, or libapache2-mod-fcgid",
	"jk_module":        "Debian's libapache2-mod-jk, or the stock mod_proxy_ajp",
	"rpaf_module":      "the stock mod_remoteip",
	"evasive20_module": "Debian's libapache2-mod-evasive",
	"auth_kerb_module": "Debian's libapache2-mod-auth-gssapi",
	"passenger_module": "Debian's libapache2-mod-passenger",
	"ruid2_module":     "Debian's libapache2-mod-ruid2, or mpm-itk",
}

// checkModules: BLD-02, BLD-03, ORD-06 on LoadModule lines; ORD-05;
// ERR-01..04; ORD-08 for fragments.
func (l *linter) checkModules() {
	if !l.moduleChecks() {
		l.report("ORD-08", posAtStart(l.firstFile()), "(no LoadModule line)", "", "")
		return
	}
	for _, d := range l.loadLines {
		id, file := d.Args[0], d.Args[1]
		base := filepath.Base(file)
		switch g, gone := gone22[base]; {
		case gone:
			l.at("BLD-02", d, base+" ("+id+") does not exist in 2.4: the LoadModule line stops start-up.", g.fix+".")
		case isBuiltin(id):
			l.at("ORD-06", d, id+" is compiled into Debian's apache2 2.4: 'module "+id+" is built-in and can't be loaded' stops start-up.", "")
		case !stock24[base] && !stock24["mod_"+strings.TrimSuffix(id, "_module")+".so"]:
			fix := "Install or build the 2.4 version of " + id + " and point LoadModule at it"
			if alt, ok := thirdParty[id]; ok {
				fix += "; for 2.4 use " + alt
			}
			l.at("BLD-03", d, id+" ("+file+") is not part of the stock 2.4 server: a module built for 2.2 does not load in 2.4. The tool cannot tell whether "+file+" was built for 2.4.", fix+".")
		}
	}
	hasMPM := false
	for id := range l.loaded {
		if strings.HasPrefix(id, "mpm_") {
			hasMPM = true
		}
	}
	if !hasMPM {
		l.report("ORD-05", posOf(l.loadLines[0]), "(no LoadModule mpm_*)", "this configuration loads no MPM: 2.2 compiled it in, 2.4 loads it as a module, and without one start-up fails ('AH00534: No MPM loaded').", "")
	}

	// ERR-01: User / Group need mod_unixd. A configuration written for
	// 2.4 that does not load it runs where it is compiled in.
	if !l.has("unixd_module") && !l.written24() {
		for _, name := range []string{"user", "group"} {
			for _, n := range l.named(name) {
				if n.topLevel() && n.vh == nil {
					l.at("ERR-01", n.d, "", "")
				}
			}
		}
	}
	// ERR-02: access directives without their module, in the main
	// configuration (start-up errors). .htaccess files: ORD-04. A big
	// configuration has thousands: the texts are made once per name.
	type texts struct{ change, fix string }
	err02 := map[string]texts{}
	lastMod, lastHas := "", false // whether lastMod is loaded, asked once per run of its directives
	for _, n := range l.nodes {
		mod, what := accessModule(n.name)
		if mod == "" {
			continue
		}
		if mod != lastMod {
			lastMod, lastHas = mod, l.has(mod)
		}
		if lastHas {
			continue
		}
		if n.ht != nil {
			l.at("ORD-04", n.d, "'"+n.d.Name+"' needs "+what+" in 2.4, which this configuration does not load: every request below "+n.ht.dir+" answers 500 ('Invalid command').", "Load "+what+" ('LoadModule "+mod+"'), or migrate the directive.")
			continue
		}
		written := sectionName(n.d) // the name as written, "<" before a section's
		t, ok := err02[written]
		if !ok {
			t = texts{"'" + n.d.Name + "' is " + what + "'s in 2.4, which this configuration does not load: start-up fails with \"Invalid command '" + written + "'\".",
				"Load " + what + " ('LoadModule " + mod + " modules/mod_" + strings.TrimSuffix(mod, "_module") + ".so'), or migrate to the 2.4 directives."}
			err02[written] = t
		}
		l.report("ERR-02", posOf(n.d), n.written(), t.change, t.fix)
	}
	// ERR-03: AddOutputFilterByType without mod_filter.
	if !l.has("filter_module") {
		for _, n := range l.named("addoutputfilterbytype") {
			if n.ht != nil {
				l.at("ORD-04", n.d, "AddOutputFilterByType needs mod_filter in 2.4, which this configuration does not load: every request below "+n.ht.dir+" answers 500.", "Add 'LoadModule filter_module modules/mod_filter.so'.")
				continue
			}
			l.at("ERR-03", n.d, "", "")
		}
	}
	// ERR-04: authentication without mod_authn_core.
	if !l.has("authn_core_module") {
		for _, name := range []string{"authtype", "authname", "authnprovideralias"} {
			for _, n := range l.named(name) {
				if n.ht != nil {
					l.at("ORD-04", n.d, "'"+n.d.Name+"' needs mod_authn_core in 2.4, which this configuration does not load: every request below "+n.ht.dir+" answers 500.", "Add 'LoadModule authn_core_module modules/mod_authn_core.so'.")
					continue
				}
				l.at("ERR-04", n.d, "", "")
			}
		}
	}
}

// accessModule returns the 2.4 module (identifier and name) that provides
// the access directive named name (in lower case), or "" if it is not one.
func accessModule(name string) (id, module string) {
	switch name {
	case "order", "allow", "deny", "satisfy":
		return "access_compat_module", "mod_access_compat"
	case "require", "requireall", "requireany", "requirenone", "authmerging", "authzsendforbiddenonfailure":
		return "authz_core_module", "mod_authz_core"
	}
	return "", ""
}

func sectionName(d *dir) string {
	if d.IsSection() {
		return "<" + d.Name
	}
	return d.Name
}
