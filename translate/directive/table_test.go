package directive_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// moduleID maps the source file Apache names a module by (apache2 -L:
// "mod_rewrite.c", "core.c", "event.c") to the table's identifier.
func moduleID(src string) string {
	switch src {
	case "core.c":
		return "core_module"
	case "http_core.c":
		return "http_module"
	case "util_ldap.c":
		return "ldap_module"
	case "event.c", "prefork.c", "worker.c":
		return "mpm"
	}
	return strings.TrimSuffix(strings.TrimPrefix(src, "mod_"), ".c") + "_module"
}

// showOverrides is Apache's show_overrides (server/config.c), which
// apache2 -L prints under each directive, less the "[no per-dir config]"
// note, which depends on the module rather than the directive.
func showOverrides(o directive.Override) string {
	var b strings.Builder
	b.WriteString("Allowed in *.conf ")
	switch {
	case o&(directive.OrOptions|directive.OrFileInfo|directive.OrIndexes) != 0 ||
		o&directive.RsrcConf != 0 && o&(directive.AccessConf|directive.OrAuthCfg|directive.OrLimit) != 0:
		b.WriteString("anywhere")
	case o&directive.RsrcConf != 0:
		b.WriteString("only outside <Directory>, <Files>, <Location>, or <If>")
	default:
		b.WriteString("only inside <Directory>, <Files>, <Location>, or <If>")
	}
	if o&directive.OrAll != 0 {
		b.WriteString(" and in .htaccess when AllowOverride")
		if o&directive.OrAll == directive.OrAll {
			b.WriteString(" isn't None")
		} else {
			b.WriteString(" includes ")
			n := 0
			for _, c := range []struct {
				bit  directive.Override
				name string
			}{{directive.OrAuthCfg, "AuthConfig"}, {directive.OrLimit, "Limit"}, {directive.OrOptions, "Options"}, {directive.OrFileInfo, "FileInfo"}, {directive.OrIndexes, "Indexes"}} {
				if o&c.bit != 0 {
					if n > 0 {
						b.WriteString(" or ")
					}
					n++
					b.WriteString(c.name)
				}
			}
		}
	}
	return b.String()
}

// listed is one directive of apache2 -L.
type listed struct {
	name, module, allowed string
}

var header = regexp.MustCompile(`^(<?[A-Za-z0-9_]+) \(([A-Za-z0-9_.]+\.c)\)$`)

// apacheDirectives runs Debian's apache2 -L with every module it ships
// loaded, and the given MPM.
func apacheDirectives(t *testing.T, p apachetest.Paths, mpm string) []listed {
	t.Helper()
	dir := t.TempDir()
	mods, err := filepath.Glob(filepath.Join(p.ModulesDir, "mod_*.so"))
	if err != nil || len(mods) < 50 {
		t.Fatalf("modules of %s: %d found (%v)", p.ModulesDir, len(mods), err)
	}
	var conf strings.Builder
	for _, m := range mods {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "mod_"), ".so")
		if strings.HasPrefix(name, "mpm_") && name != mpm {
			continue
		}
		fmt.Fprintf(&conf, "LoadModule %s_module %s\n", name, m)
	}
	fmt.Fprintf(&conf, "ServerName 127.0.0.1\nPidFile %s/pid\nErrorLog %s/error.log\n", dir, dir)
	cf := filepath.Join(dir, "all.conf")
	if err := os.WriteFile(cf, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Apache, "-f", cf, "-L")
	cmd.Env = append(os.Environ(), "APACHE_RUN_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -L: %v", p.Apache, err)
	}
	var list []listed
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if m := header.FindStringSubmatch(line); m != nil {
			list = append(list, listed{name: m[1], module: moduleID(m[2])})
			continue
		}
		s := strings.TrimSpace(line)
		if len(list) > 0 && (strings.HasPrefix(s, "Allowed in") || strings.HasPrefix(s, "when AllowOverride")) {
			l := &list[len(list)-1]
			s = strings.Replace(s, " [no per-dir config]", "", 1)
			if l.allowed != "" {
				l.allowed += " "
			}
			l.allowed += s
		}
	}
	if len(list) < 600 {
		t.Fatalf("apache2 -L listed %d directives; expected the whole set", len(list))
	}
	return list
}

// TestTableMatchesApache24 holds the 2.4 rows to Apache itself: every
// directive Debian's apache2 lists with all its modules loaded (under the
// event and the prefork MPM) has a row with the same module and
// req_override, and every 2.4 row of a module Debian ships is listed.
func TestTableMatchesApache24(t *testing.T) {
	p := apachetest.Require(t)
	seen := map[string]bool{} // lower name + module
	shipped := map[string]bool{"core_module": true, "http_module": true, "mpm": true}
	var listedN int
	for _, mpm := range []string{"mpm_event", "mpm_prefork"} {
		for _, l := range apacheDirectives(t, p, mpm) {
			shipped[l.module] = true
			key := strings.ToLower(l.name) + " " + l.module
			if seen[key] {
				continue
			}
			seen[key] = true
			listedN++
			var row *directive.Info
			for _, r := range directive.Lookup(l.name, directive.V24) {
				if r.Module == l.module {
					row = r
				}
			}
			if row == nil {
				t.Errorf("%s (%s): listed by apache2 -L, no 2.4 row in the table", l.name, l.module)
				continue
			}
			if row.Name != l.name {
				t.Errorf("%s (%s): the table spells it %q", l.name, l.module, row.Name)
			}
			if got := showOverrides(row.Where); got != l.allowed {
				t.Errorf("%s (%s): apache2 -L says %q, the table's override says %q", l.name, l.module, l.allowed, got)
			}
		}
	}
	rows := 0
	for _, r := range directive.All() {
		if r.In&directive.V24 == 0 || !shipped[r.Module] {
			continue
		}
		rows++
		if !seen[strings.ToLower(r.Name)+" "+r.Module] {
			t.Errorf("%s (%s): a 2.4 row of a module Debian ships, not listed by apache2 -L", r.Name, r.Module)
		}
	}
	t.Logf("%d directives listed by Apache 2.4, %d rows of the table checked", listedN, rows)
}

// docModule maps the module column of the 2.2 documentation index to the
// table's identifier.
func docModule(m string) string {
	switch m {
	case "core":
		return "core_module"
	case "mpm_common", "prefork", "worker", "event", "mpm_winnt", "beos", "mpm_netware", "mpmt_os2":
		return "mpm"
	case "mod_ldap":
		return "ldap_module"
	}
	return strings.TrimPrefix(m, "mod_") + "_module"
}

// docsKnownDifferent are the 2.2 documentation rows that Apache 2.2's
// source (the 2.2.34 command tables, which the table follows) contradicts,
// each with what the source says.
var docsKnownDifferent = map[string]string{
	"AuthDigestNcCheck":              "OR_AUTHCFG in mod_auth_digest.c",
	"DeflateInflateLimitRequestBody": "OR_ALL in mod_deflate.c",
	"DeflateInflateRatioBurst":       "OR_ALL in mod_deflate.c",
	"DeflateInflateRatioLimit":       "OR_ALL in mod_deflate.c",
	"SSIEnableAccess":                "spelt SSIAccessEnable in mod_include.c",
	"SSIETag":                        "OR_LIMIT in mod_include.c",
	"SSILastModified":                "OR_LIMIT in mod_include.c",
	"SSLCACertificateFile":           "RSRC_CONF|OR_AUTHCFG in mod_ssl.c (SSL_CMD_ALL)",
	"SSLCACertificatePath":           "RSRC_CONF|OR_AUTHCFG in mod_ssl.c (SSL_CMD_ALL)",
	"SSLProtocol":                    "RSRC_CONF in mod_ssl.c (SSL_CMD_SRV)",
	"SSLProxyCipherSuite":            "RSRC_CONF in mod_ssl.c (SSL_CMD_SRV)",
	"SSLProxyProtocol":               "RSRC_CONF in mod_ssl.c (SSL_CMD_SRV)",
	"SSLProxyVerifyDepth":            "RSRC_CONF in mod_ssl.c (SSL_CMD_SRV)",
	"Substitute":                     "OR_ALL in mod_substitute.c",
}

// coreish are the identifiers a directive the 2.2 documentation files
// under core or mpm_common may have in the source: core.c, http_core.c,
// or the MPM's own table.
var coreish = map[string]bool{"core_module": true, "http_module": true, "mpm": true}

// TestTableMatchesDocs22 holds the 2.2 rows to the directive index of
// Apache 2.2's documentation (testdata/apache-directives.tsv): every
// documented 2.2 directive of a Unix build has a row of the same module
// whose AllowOverride class is the documented one, and every 2.2 row is
// documented.
func TestTableMatchesDocs22(t *testing.T) {
	f, err := os.Open("testdata/apache-directives.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	documented := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "version\t") {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != 5 {
			t.Fatalf("bad line %q", line)
		}
		if fs[0] != "2.2" {
			continue
		}
		name, mod, override := fs[1], docModule(fs[2]), fs[4]
		switch fs[2] {
		case "mpm_winnt", "beos", "mpm_netware", "mpmt_os2", "mod_isapi", "mod_nw_ssl", "mod_win32", "mod_netware", "mod_example":
			continue // not built on Unix
		}
		if name == "CGIMapExtension" || name == "ScriptInterpreterSource" || name == "StartThreads" {
			continue // Windows, NetWare and BeOS only
		}
		n++
		documented[strings.ToLower(name)] = true
		rows := directive.Lookup(name, directive.V22)
		rows = append(rows, directive.Lookup("<"+name, directive.V22)...)
		var row *directive.Info
		for _, r := range rows {
			if r.Module == mod || coreish[r.Module] && coreish[mod] {
				row = r
			}
		}
		if why, ok := docsKnownDifferent[name]; ok {
			t.Logf("%s: %s", name, why)
			continue
		}
		if row == nil {
			t.Errorf("%s (%s): documented for 2.2, no 2.2 row of that module", name, mod)
			continue
		}
		want := override
		if want == "-" || want == "Not applicable" {
			want = ""
		}
		if got := row.Overrides(); got != want {
			t.Errorf("%s (%s): documented override %q, the table's %q", name, mod, want, got)
		}
	}
	var undocumented []string
	for _, r := range directive.All() {
		if r.In&directive.V22 != 0 && !documented[strings.ToLower(strings.TrimPrefix(r.Name, "<"))] {
			undocumented = append(undocumented, r.Name)
		}
	}
	sort.Strings(undocumented)
	if want := "CaseFilter, CaseFilterIn, FancyIndexing, Port, SSIAccessEnable, SSLLog, SSLLogLevel"; strings.Join(undocumented, ", ") != want {
		t.Errorf("2.2 rows not in the documentation: %s; want %s", strings.Join(undocumented, ", "), want)
	}
	t.Logf("%d documented 2.2 directives checked; in the 2.2 source but not its documentation: %s", n, strings.Join(undocumented, ", "))
}
