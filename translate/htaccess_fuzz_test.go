package translate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// FuzzParseHtaccess: any .htaccess text, under any AllowOverride, is a
// section or a list of errors that name the file, never a panic; the
// section's rules are all of the file.
func FuzzParseHtaccess(f *testing.F) {
	for _, s := range []string{
		"Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8 .example.org\n",
		"AuthType Basic\nAuthName \"Members \\\"only\\\"\"\nAuthUserFile /x/users\nRequire valid-user\nSatisfy Any\n",
		"<Files x>\nOrder deny,allow\nDeny from all\n</Files>\n<FilesMatch \"\\.sql$\">\nDeny from all\n</FilesMatch>\n",
		"<IfModule mod_authz_host.c>\nOrder allow,deny\n</IfModule>\n<IfModule !mod_x.c>\nAllow from all\n</IfModule>\n",
		"<Limit GET POST>\nRequire user a b\n</Limit>\n<LimitExcept GET>\nDeny from all\n</LimitExcept>\n",
		"SetEnvIf Referer \"^https?://x/\" ok\nAllow from env=ok\nDeny from env=!ok\n",
		"<RequireAll>\nRequire ip 10.0.0.0/8\nRequire not host x\n</RequireAll>\nAuthMerging And\n",
		"Nonfatal Override\nOptions -Indexes\nDirectoryIndex a b\n",
	} {
		f.Add([]byte(s), uint16(OrAll), uint16(0), false)
	}
	f.Add([]byte("<RequireAll>\n0\nOptions None\nRequire ip 10.0.0.1\n</RequireAll>\n"), uint16(OrAuthCfg), uint16(3), true)
	dir := f.TempDir()
	conf := filepath.Join(dir, "empty.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		f.Fatal(err)
	}
	var cfgs [2]*Config
	for i, sem := range []Semantics{Legacy22, Compat24} {
		c, err := Load([]string{conf}, LoadOptions{Options: Options{Semantics: sem, BaseDir: dir, DocumentRoot: dir}})
		if err != nil {
			f.Fatal(err)
		}
		cfgs[i] = c
	}
	const path = "/srv/www/sub/.htaccess"
	f.Fuzz(func(t *testing.T, data []byte, override, nonfatal uint16, compat bool) {
		c := cfgs[0]
		if compat {
			c = cfgs[1]
		}
		sec, err := c.ParseHtaccess(path, data, override, nonfatal, "/srv")
		// Deterministic: the same file under the same AllowOverride reads
		// the same way twice (no map order, no state kept between reads).
		sec2, err2 := c.ParseHtaccess(path, data, override, nonfatal, "/srv")
		if fmt.Sprint(err) != fmt.Sprint(err2) || (sec == nil) != (sec2 == nil) || sec != nil && len(sec.Rules) != len(sec2.Rules) {
			t.Fatalf("two reads differ: %v / %v", err, err2)
		}
		// AllowOverride None with no Nonfatal= allows nothing: a file with
		// a directive in it is refused (ap_parse_htaccess, invoke_cmd).
		if override == 0 && nonfatal == 0 && err == nil && hasDirective(data) {
			t.Fatalf("a directive was allowed under AllowOverride None:\n%s", data)
		}
		// Nonfatal=Override skips what AllowOverride forbids: never "not
		// allowed" (a section's end line that closes nothing is what
		// Apache reports instead), but inside a Require container, whose
		// contents mod_authz_core reads with AuthConfig alone allowed and
		// no Nonfatal= (add_authz_section).
		if nonfatal&1 != 0 && err != nil && strings.Contains(err.Error(), "not allowed") && !strings.Contains(strings.ToLower(string(data)), "<require") {
			t.Fatalf("Nonfatal=Override, yet: %v", err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		if sec == nil {
			t.Fatal("no section and no error")
		}
		if sec.Kind != KindHtaccess || sec.Path != path {
			t.Fatalf("section %v %q, want an .htaccess section for %s", sec.Kind, sec.Path, path)
		}
	})
}

// hasDirective reports whether an .htaccess text holds a directive at all
// (apacheconf reads it: comments and blank lines are not).
func hasDirective(data []byte) bool {
	ds, err := apacheconf.Parse("/x/.htaccess", data)
	return err != nil || len(ds) > 0
}
