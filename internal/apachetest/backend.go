package apachetest

import (
	"path"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// The backend of the differential test serves a case as the oracle does
// with its access rules taken out: the same URL mapping (aliases, virtual
// hosts, DirectoryIndex, Options, redirects, ErrorDocument, handlers, the
// .htaccess files' own mapping), so that its answers, and orderly's in
// front of it, can be compared with the oracle's status for status.
//
// What goes comes from orderly's directive table (translate/directive):
// a directive or section whose Effect, in 2.2 or 2.4, is
//
//   - Decides: the access rules (authentication, authorization, host
//     access, TLS requirements, method lists);
//   - Limits: the refusals of a request by its size or form
//     (LimitRequestBody, LimitRequestLine, LimitRequestFields,
//     LimitRequestFieldSize, StrictHostCheck, HttpProtocolOptions,
//     TraceEnable). orderly answers them itself, before it forwards; and
//     the request the backend reads is orderly's, not the client's: it
//     carries the header fields orderly adds (X-Forwarded-Host,
//     X-Forwarded-Proto, a Host for an HTTP/1.0 request that had none),
//     which the backend would count against the client.
//
// <Limit> and <LimitExcept> hold access rules and nothing else that
// depends on the method: their other contents apply to every method in
// Apache, so the section's lines go and its contents stay.

// IsFrontRule reports whether a directive or section (its name without the
// angle bracket, as [apacheconf.Directive] has it) is one the backend
// goes without: an access rule or a request limit, which orderly enforces
// in front of it (Effect Decides or Limits in orderly's directive table,
// in 2.2 or 2.4).
func IsFrontRule(name string, section bool) bool {
	if section {
		name = "<" + name
	}
	for _, info := range directive.Lookup(name, directive.V22|directive.V24) {
		if info.Effect == directive.Decides || info.Effect == directive.Limits {
			return true
		}
	}
	return false
}

// isLimitSection reports whether d is <Limit> or <LimitExcept>.
func isLimitSection(d *apacheconf.Directive) bool {
	return d.IsSection() && (d.Is("Limit") || d.Is("LimitExcept"))
}

// StripAccess returns src, a configuration file or an .htaccess file named
// name, with its access rules and request limits ([IsFrontRule]) taken out, and the lines it
// took out, 1-based. The lines of a <Limit> or <LimitExcept> section's
// opening and closing tags go too, and the rest of its contents stays.
// Every line taken out is left empty, so that the lines that remain keep
// their numbers. The file is read with [apacheconf.Parse], which does not
// follow Include: a file that includes others needs them stripped too.
//
// A file Parse refuses is returned as it is, with the error: Apache
// refuses it too, the access rules in it included.
func StripAccess(name string, src []byte) ([]byte, []int, error) {
	ds, err := apacheconf.Parse(name, src)
	if err != nil {
		return src, nil, err
	}
	drop := make(map[int]bool)
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		switch {
		case IsFrontRule(d.Name, d.IsSection()):
			for l := d.Pos.Line; l <= d.EndLine; l++ {
				drop[l] = true
			}
			return apacheconf.SkipBlock
		case isLimitSection(d):
			// The opening tag runs to the line before the first
			// directive inside (continuation lines), or is one line.
			end := d.Pos.Line
			if len(d.Block) > 0 {
				end = max(end, d.Block[0].Pos.Line-1)
			}
			for l := d.Pos.Line; l <= end; l++ {
				drop[l] = true
			}
			drop[d.EndLine] = true
		}
		return nil
	})
	if len(drop) == 0 {
		return src, nil, nil
	}
	lines := strings.SplitAfter(string(src), "\n")
	var b strings.Builder
	for i, l := range lines {
		if !drop[i+1] {
			b.WriteString(l)
			continue
		}
		switch {
		case strings.HasSuffix(l, "\r\n"):
			b.WriteString("\r\n")
		case strings.HasSuffix(l, "\n"):
			b.WriteString("\n")
		}
	}
	lineNos := make([]int, 0, len(drop))
	for l := range drop {
		lineNos = append(lineNos, l)
	}
	slices.Sort(lineNos)
	return []byte(b.String()), lineNos, nil
}

// accessFileNames returns the names the configuration gives .htaccess
// files (AccessFileName, anywhere in it), or ".htaccess", Apache's
// default, when it gives none.
func accessFileNames(ds []*apacheconf.Directive) []string {
	var names []string
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		if !d.IsSection() && d.Is("AccessFileName") {
			names = append(names, d.Args...)
		}
		return nil
	})
	if len(names) == 0 {
		names = []string{".htaccess"}
	}
	return names
}

// WithoutAccess returns a copy of the case for the backend: legacy.conf
// and every .htaccess file under docroot/ and extra/ (named as the
// configuration's AccessFileName says, .htaccess by default) with their
// access rules and request limits taken out ([StripAccess]). Materialized, it serves the
// case's URLs as the oracle does, with no access rule. A file Parse
// refuses is kept as it is: Apache refuses it as a whole.
func (c *Case) WithoutAccess() *Case {
	b := *c
	b.Legacy, _, _ = StripAccess(LegacyFile, c.Legacy)
	var names []string
	if ds, err := apacheconf.Parse(LegacyFile, c.Legacy); err == nil {
		names = accessFileNames(ds)
	} else {
		names = []string{".htaccess"}
	}
	b.Files = slices.Clone(c.Files)
	for i, f := range b.Files {
		top, _, _ := strings.Cut(f.Name, "/")
		if top != DocRootDir && top != ExtraDir || strings.HasSuffix(f.Name, "/") || strings.HasSuffix(f.Name, SymlinkSuffix) {
			continue
		}
		if !slices.Contains(names, path.Base(f.Name)) {
			continue
		}
		b.Files[i].Data, _, _ = StripAccess(f.Name, f.Data)
	}
	return &b
}
