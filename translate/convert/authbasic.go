package convert

import (
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// basic22 is what a 2.2 configuration sets of mod_auth_basic anywhere,
// for basic22Edits.
//
// 2.2's mod_auth_basic has no merger (create_auth_basic_dir_config only,
// 2.2.x modules/aaa/mod_auth_basic.c): a section that sets
// AuthBasicProvider or AuthBasicAuthoritative holds the module's whole
// configuration, the other setting at its default (the file provider;
// On), as serve merges it (translate/walk, accum.merge). 2.4's
// merge_auth_basic_dir_config merges the two apart, so that the same
// section would take the other from the sections merged before it: an
// AuthBasicProvider ldap or dbm (whose users 2.2 did not ask there), an
// AuthBasicAuthoritative Off. The other modules that authenticate or
// authorize have no merger in 2.4 either (mod_authn_file, mod_authn_dbm,
// mod_authn_anon, mod_auth_digest, mod_authnz_ldap, mod_authz_groupfile,
// mod_authz_dbm, mod_authz_user; mod_authz_owner has no configuration),
// nor has mod_access_compat, which took over mod_authz_host's Order,
// Allow and Deny; AuthType and AuthName merge line by line in 2.2's core
// and 2.4's mod_authn_core alike.
type basic22 struct {
	providers bool // some section sets a provider list other than "file"
	lax       bool // some section sets AuthBasicAuthoritative Off
}

// basic22Of reads what the sections set.
func basic22Of(secs []*translate.Section) basic22 {
	var b basic22
	for _, s := range secs {
		c := s.Conf
		if c.BasicProviders != nil && !(len(c.BasicProviders) == 1 && c.BasicProviders[0] == "file") {
			b.providers = true
		}
		if c.BasicAuthoritative != nil && !*c.BasicAuthoritative {
			b.lax = true
		}
	}
	return b
}

// basic22Edits writes, in a 2.2 section (block, as written) that sets
// one of AuthBasicProvider and AuthBasicAuthoritative, the other as 2.2
// had it there, after the section's last line of the two: where some
// section of the configuration sets it otherwise, 2.4 might give the
// section that instead. AuthBasicProvider file needs mod_authn_file: a
// configuration without it had no provider there (2.2 answered 500), which
// 2.4 cannot say; the line is written all the same, so that Apache 2.4
// refuses to start ("Unknown Authn provider") until a person decides,
// and the section is reported (review).
func (b basic22) edits(cfg *translate.Config, s *translate.Section, block []*apacheconf.Directive) ([]edit, string) {
	c := s.Conf
	if cfg.Semantics != translate.Legacy22 || !c.Basic22 || (c.BasicProviders == nil) == (c.BasicAuthoritative == nil) {
		return nil, "" // neither, or both
	}
	var text, review string
	switch {
	case c.BasicProviders == nil && b.providers:
		text = "AuthBasicProvider file"
		if cfg.Modules != nil && !cfg.Modules["authn_file_module"] {
			review = "AuthBasicAuthoritative without AuthBasicProvider: 2.2 (mod_auth_basic has no merger) asked the default provider, file, which is not loaded (500); 2.4 would take the enclosing section's providers. AuthBasicProvider file is written, which Apache 2.4 refuses without mod_authn_file: decide what this section needs"
		}
	case c.BasicAuthoritative == nil && b.lax:
		text = "AuthBasicAuthoritative On"
	default:
		return nil, ""
	}
	at := lastBasic(block)
	if at == nil {
		return nil, "" // not written in the block (cannot be)
	}
	indent := indentAt(at.Pos.Col)
	end := max(at.EndLine, at.Pos.Line)
	return []edit{{from: end + 1, to: end, text: []string{
		indent + "# orderly: 2.2's mod_auth_basic has no merger: this section's " + at.Name + " leaves the other setting at its default, which 2.4 would take from the enclosing section",
		indent + text}}}, review
}

// lastBasic is the last AuthBasicProvider or AuthBasicAuthoritative line
// of block, in it or in a container in it (<IfModule>, <Limit>), not in
// a section of its own (<Files>).
func lastBasic(block []*apacheconf.Directive) *apacheconf.Directive {
	var at *apacheconf.Directive
	for _, d := range block {
		switch n := d.LowerName(); {
		case n == "authbasicprovider" || n == "authbasicauthoritative":
			at = d
		case d.Block != nil && n != "files" && n != "filesmatch":
			if in := lastBasic(d.Block); in != nil {
				at = in
			}
		}
	}
	return at
}
