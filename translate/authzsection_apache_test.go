package translate

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestRequireSectionsMatchApache24 holds to apache2 -t what a <RequireAll>,
// <RequireAny> or <RequireNone> may hold. mod_authz_core reads their
// contents as the section's own directives with AuthConfig's alone
// allowed (add_authz_section sets cmd->override to OR_AUTHCFG): AuthName,
// Satisfy and <Limit> act as they would outside, Options or Order are
// "not allowed in <RequireAll> context", a name Apache does not know is
// "Invalid command", and a <Files> is refused as inside a <Limit> (the
// section clears cmd->limited's last bit to make it so).
func TestRequireSectionsMatchApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, _ := allModules(t, p)
	in := func(section, body string) string {
		return "<Directory /srv>\n<" + section + ">\n" + body + "\n</" + section + ">\n</Directory>\n"
	}
	bodies := []string{
		"AuthName \"x\"\nRequire ip 10.0.0.1",
		"AuthType Basic\nAuthUserFile /x/users\nRequire valid-user",
		"Satisfy any\nRequire ip 10.0.0.1",
		"AuthMerging And\nRequire ip 10.0.0.1",
		"Options -Indexes\nRequire ip 10.0.0.1",
		"Order allow,deny\nRequire ip 10.0.0.1",
		"Allow from all\nRequire ip 10.0.0.1",
		"SetEnvIf Referer x ok\nRequire env ok",
		"RewriteEngine On\nRequire ip 10.0.0.1",
		"Bogus x\nRequire ip 10.0.0.1",
		"<Files x>\nRequire all denied\n</Files>\nRequire ip 10.0.0.1",
		"<Limit GET>\nRequire ip 10.0.0.1\n</Limit>",
		"<LimitExcept GET>\nRequire ip 10.0.0.1\n</LimitExcept>\nRequire ip 10.0.0.2",
		"<Limit GET>\nRequire ip 10.0.0.1\n<Limit GET>\nRequire ip 10.0.0.2\n</Limit>\n</Limit>",
		"<Limit GET>\nAuthName x\n</Limit>",
		"<Limit GET>\nOptions None\nRequire ip 10.0.0.1\n</Limit>",
		"<IfModule mod_authz_host.c>\nRequire ip 10.0.0.1\n</IfModule>",
		"<IfModule !mod_nope.c>\nBogus x\n</IfModule>\nRequire ip 10.0.0.1",
		"<RequireAny>\nAuthName x\nRequire ip 10.0.0.1\n</RequireAny>",
		"<RequireAny>\nOptions None\nRequire ip 10.0.0.1\n</RequireAny>",
		"ErrorDocument 403 /x\nRequire ip 10.0.0.1",
		"Header set X y\nRequire ip 10.0.0.1",
		"<If \"true\">\nRequire all denied\n</If>\nRequire ip 10.0.0.1",
		"<Directory /x>\n</Directory>\nRequire ip 10.0.0.1",
		"AuthzSendForbiddenOnFailure On\nRequire ip 10.0.0.1",
		"DirectoryIndex a\nRequire ip 10.0.0.1",
		"AllowOverride None\nRequire ip 10.0.0.1",
	}
	for _, body := range []string{
		"<Limit GET>\n<Files x>\nRequire all denied\n</Files>\n</Limit>",
		"<LimitExcept GET>\n<FilesMatch x>\nRequire all denied\n</FilesMatch>\n</LimitExcept>",
		"<Limit GET>\n<If \"true\">\nAuthName x\n</If>\n</Limit>",
		"<Limit GET>\n<Limit POST>\nRequire all denied\n</Limit>\n</Limit>",
	} {
		text := "<Directory /srv>\n" + body + "\n</Directory>\n"
		apache, ours := refusals(t, p, load, text)
		if apache != ours {
			t.Errorf("%q:\n apache2: %s\n orderly: %s", text, apache, ours)
		}
	}
	for _, body := range bodies {
		for _, section := range []string{"RequireAll", "RequireAny", "RequireNone"} {
			text := in(section, body)
			if section == "RequireNone" {
				text = "<Directory /srv>\n<RequireAll>\nRequire all granted\n<RequireNone>\n" + body + "\n</RequireNone>\n</RequireAll>\n</Directory>\n"
			}
			apache, ours := refusals(t, p, load, text)
			if strings.HasPrefix(apache, "(starts") && ours == "(loads)" {
				continue
			}
			if apache != ours {
				t.Errorf("%q:\n apache2: %s\n orderly: %s", text, apache, ours)
			}
		}
	}
}
