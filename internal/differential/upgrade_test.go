package differential

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate"
)

// TestTranslateStock22 translates a whole 2.2 httpd.conf in the style of
// the stock one (catalogue renames and removals, modules gone in 2.4, the
// access rules) and has Apache 2.4 check the result with apache2 -t:
// without mod_access_compat, a legacy directive left behind is an error.
func TestTranslateStock22(t *testing.T) {
	paths := apachetest.Require(t)
	root := apachetest.TempDir(t)
	src, err := os.ReadFile("../../testdata/upgrade/stock22/httpd.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(root, "httpd.conf")
	os.WriteFile(conf, bytes.ReplaceAll(bytes.ReplaceAll(src, []byte("@ROOT@"), []byte(root)), []byte("@PORT@"), []byte("8999")), 0o644)
	for _, d := range []string{"htdocs/private", "icons"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "users"), []byte("alice:{SHA}tiY7sUhYKUwI5L3866kDY+ENcrQ=\n"), 0o644)
	conv, err := translate.Convert([]string{conf}, translate.ConvertOptions{LoadOptions: translate.LoadOptions{
		Options: translate.Options{Semantics: translate.Legacy22, ForwardUnfaithful: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Reviews) > 0 {
		t.Errorf("sections left for review: %v", conv.Reviews)
	}
	out := filepath.Join(root, "httpd24.conf")
	os.WriteFile(out, conv.Files[conf], 0o644)
	cmd := exec.Command(paths.Apache, "-t", "-f", out)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil || !strings.Contains(b.String(), "Syntax OK") {
		t.Fatalf("apache2 -t on the translation: %v\n%s\n--- translation:\n%s", err, b.String(), conv.Files[conf])
	}
	text := string(conv.Files[conf])
	for _, want := range []string{"MaxRequestWorkers 150", "MaxConnectionsPerChild 0", "# orderly DIR-08", "# orderly DIR-03", "# orderly DIR-09", "KeepAlive On", "# orderly BLD-02", "LoadModule authn_core_module", "Require all denied", "Require all granted", "Require ip 127.0.0.1/32 10.0.0.0/8"} {
		if !strings.Contains(text, want) {
			t.Errorf("translation lacks %q", want)
		}
	}
}
