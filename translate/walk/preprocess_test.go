package walk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// The packaged configuration files of the 2.2 -> 2.4 transition put their
// access rules in <IfVersion> blocks; the branch for the version the rules
// are read as applies, in the configuration and in .htaccess files, and a
// Define of the configuration reaches ${...} in .htaccess files (2.4).
func TestIfVersionAndDefines(t *testing.T) {
	conf := `Define LAN 10.0.0.0/8
<Directory @DOCROOT@/app>
    AllowOverride All
    <IfVersion < 2.4>
        Order deny,allow
        Deny from all
        Allow from 192.168.0.0/16
    </IfVersion>
    <IfVersion >= 2.4>
        Require ip 172.16.0.0/12
    </IfVersion>
</Directory>
`
	htaccess := "<IfVersion >= 2.4.0>\nRequire ip ${LAN}\n</IfVersion>\n"
	for _, tt := range []struct {
		sem     translate.Semantics
		version string
		ip      string
		target  string
		want    int
	}{
		{translate.Legacy22, "", "192.168.1.1", "/app/index.html", 0},
		{translate.Legacy22, "", "172.16.1.1", "/app/index.html", 403},
		{translate.Compat24, "", "172.16.1.1", "/app/index.html", 0},
		{translate.Compat24, "", "192.168.1.1", "/app/index.html", 403},
		{translate.Compat24, "2.4.10", "172.16.1.1", "/app/index.html", 0},
		// The .htaccess file's Require replaces the section's (2.4).
		{translate.Compat24, "", "10.1.2.3", "/app/sub/index.html", 0},
		{translate.Compat24, "", "172.16.1.1", "/app/sub/index.html", 403},
	} {
		conf, htaccess := conf, htaccess
		if tt.sem == translate.Legacy22 {
			// 2.2 has no Define (Invalid command) and reads ${} from the
			// environment only.
			conf, htaccess = strings.Replace(conf, "Define LAN 10.0.0.0/8\n", "", 1), ""
		}
		e := versionEngine(t, tt.sem, tt.version, conf, htaccess)
		if res := decide(e, req{target: tt.target, ip: tt.ip}); res.Status != tt.want {
			t.Errorf("%s %s %s from %s: %d, want %d", tt.sem, tt.version, tt.target, tt.ip, res.Status, tt.want)
		}
	}
}

func versionEngine(t *testing.T, sem translate.Semantics, version, conf, htaccess string) *Engine {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	for _, f := range []string{"app/index.html", "app/sub/index.html"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644)
	}
	if htaccess != "" {
		os.WriteFile(filepath.Join(root, "app/sub/.htaccess"), []byte(htaccess), 0o644)
	}
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(strings.ReplaceAll(conf, "@DOCROOT@", root)), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: root}, Version: version})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return New(cfg, OS, users{})
}
