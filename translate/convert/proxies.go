package convert

import (
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// proxySection is a <Proxy> or <ProxyMatch> section with access rules,
// and the <VirtualHost> it is in (nil: the main server's).
type proxySection struct {
	d, vhost *apacheconf.Directive
}

// convertProxies translates the access rules of the <Proxy> and
// <ProxyMatch> sections all (as loadedFiles finds them). For a proxied request Apache merges, over the server's
// defaults, the <Proxy> sections that match it (mod_proxy's proxy_walk:
// the main server's, then the virtual host's), not the file-system walk.
// Where one such section with access rules is all a server has, it
// inherits nothing else and is translated on its own; where a server has
// several, which merge depends on the request, and they are left as
// written, for review.
func convertProxies(cfg *translate.Config, all []proxySection) (map[string][]edit, []translate.Difference, []SectionText) {
	mainCount, hostCount, most := 0, map[*apacheconf.Directive]int{}, 0
	for _, p := range all {
		if p.vhost == nil {
			mainCount++
		} else {
			hostCount[p.vhost]++
		}
	}
	for _, n := range hostCount {
		most = max(most, n)
	}
	edits := map[string][]edit{}
	var reviews []translate.Difference
	var texts []SectionText
	for _, p := range all {
		// The main server's sections apply in every virtual host too.
		n := mainCount + hostCount[p.vhost]
		if p.vhost == nil {
			n = mainCount + most
		}
		if n > 1 {
			reviews = append(reviews, translate.Difference{Pos: p.d.Pos, Text: "access rules in <" + p.d.Name + "> sections are not translated where a server has several (which of them merge depends on the request); left as they are (2.4 needs mod_access_compat for them, or a Require written by hand)"})
			continue
		}
		es, review := convertProxy(cfg, p.d)
		if review != "" {
			reviews = append(reviews, translate.Difference{Pos: p.d.Pos, Text: review})
		}
		edits[p.d.Pos.File] = append(edits[p.d.Pos.File], es...)
		texts = append(texts, proxyText(p.d, es, review))
	}
	return edits, reviews, texts
}

// convertProxy translates one <Proxy> section standing alone: as a
// section over the server's defaults, which is what it is for the
// requests it matches.
func convertProxy(cfg *translate.Config, d *apacheconf.Directive) ([]edit, string) {
	alone := &apacheconf.Directive{Name: "Directory", Args: []string{"/"}, Raw: "/", Block: d.Block, Pos: d.Pos}
	pcfg, err := translate.Build([]*apacheconf.Directive{alone}, translate.Options{Semantics: cfg.Semantics, Modules: cfg.Modules,
		BaseDir: cfg.BaseDir, ServerRoot: cfg.ServerRoot, DocumentRoot: "/", ForwardUnfaithful: true})
	if err != nil {
		return nil, "access rules in <" + d.Name + "> not translated: " + err.Error()
	}
	for _, s := range pcfg.Dirs {
		if s.Directive() == alone {
			return convertSection(pcfg, s)
		}
	}
	return nil, "access rules in <" + d.Name + "> not translated"
}
