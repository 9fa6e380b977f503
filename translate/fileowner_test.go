package translate

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// Require file-owner, file-group and dbm-file-group (2.4) are evaluated;
// file-group and dbm-file-group need mod_authz_owner, without which
// Apache's child crashes on them: serve refuses them, translate writes
// them as they are and lint reports serve's refusal. Their arguments,
// which Apache ignores, are kept.
func TestRequireFileOwner(t *testing.T) {
	for _, tt := range []struct {
		line  string
		mods  []string
		prov  policy.Provider
		args  []string
		error string // serve's; "" none
	}{
		{"Require file-owner", []string{"authz_owner_module"}, policy.ProvFileOwner, nil, ""},
		{"Require file-owner ignored words", []string{"authz_owner_module"}, policy.ProvFileOwner, []string{"ignored", "words"}, ""},
		{"Require file-group", []string{"authz_owner_module"}, policy.ProvFileGroup, nil, ""},
		{"Require dbm-file-group", []string{"authz_owner_module", "authz_dbm_module"}, policy.ProvDBMFileGroup, nil, ""},
		{"Require file-group", nil, policy.ProvFileGroup, nil, "legacy.conf:6: Require file-group without mod_authz_owner: Apache's child crashes on it (mod_authz_groupfile calls mod_authz_owner's authz_owner_get_file_group, which is not there)"},
		{"Require dbm-file-group", []string{"authz_dbm_module"}, policy.ProvDBMFileGroup, nil, "legacy.conf:6: Require dbm-file-group without mod_authz_owner: Apache's child crashes on it (mod_authz_dbm calls"},
		{"Require file-owner", nil, 0, nil, "legacy.conf:6: Unknown Authz provider: file-owner"},
	} {
		text := "<Directory /srv/www>\n    AuthType Basic\n    AuthName x\n    AuthUserFile /dev/null\n    AuthGroupFile /dev/null\n    " + tt.line + "\n</Directory>\n"
		cfg, err := buildText(t, text, Options{Semantics: Compat24, Modules: fragmentModules(tt.mods...)})
		if tt.error != "" {
			if err == nil || !strings.Contains(err.Error(), tt.error) {
				t.Errorf("%s with %v: %v, want %q", tt.line, tt.mods, err, tt.error)
			}
			if strings.Contains(tt.error, "Unknown") {
				continue
			}
			// translate writes it; lint has serve's refusal.
			cfg, err = buildText(t, text, Options{Semantics: Compat24, RenderOnly: true, Modules: fragmentModules(tt.mods...)})
			if err != nil || len(cfg.Unservable) != 1 || !strings.Contains(cfg.Unservable[0].Error(), tt.error) {
				t.Errorf("%s with %v, written out: %v, unservable %v", tt.line, tt.mods, err, cfg.Unservable)
				continue
			}
		} else if err != nil {
			t.Errorf("%s with %v: %v", tt.line, tt.mods, err)
			continue
		}
		n := cfg.Dirs[0].Conf.Authz.Root.Children[0]
		if n.Provider != tt.prov || strings.Join(n.Args, " ") != strings.Join(tt.args, " ") || n.Negate != strings.Contains(tt.line, " not ") {
			t.Errorf("%s with %v: %+v", tt.line, tt.mods, n)
		}
		if got := strings.Join(policy.Render(cfg.Dirs[0].Conf.Authz.Root, ""), "\n"); !strings.Contains(got, tt.line) {
			t.Errorf("%s rendered %q", tt.line, got)
		}
	}
}
