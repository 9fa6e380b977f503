package convert

import (
	"strings"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// SectionText is what Convert wrote for one section with access rules
// (catalogue DIR-10): the record orderly lint builds its DIR-10 fix texts
// from, so that the fix lint proposes is the text translate writes.
type SectionText struct {
	// Pos is the section's opening line; for an .htaccess file, the file
	// at line 1.
	Pos apacheconf.Pos
	// Name is the section's name as Apache spells it ("Directory",
	// "FilesMatch", "Proxy", ...), "htaccess" for an .htaccess file;
	// Pattern its argument as written (an .htaccess file's path).
	Name, Pattern string
	// At is the first access line of the section, which Lines replace
	// (the others are deleted).
	At apacheconf.Pos
	// Lines are the text that replaces the section's access lines, line
	// by line as written into the file, less the indentation of the first
	// access line (a nested line keeps what it has more). They include
	// translate's "# orderly DIR-10: ..." comment lines and, where the
	// section is left for review, the legacy lines commented out. They
	// are recorded before the renames Convert applies to every line of a
	// file (DIR-01..09), which leave Require lines and their containers
	// as they are (lint's TestDIR10FixMatchesTranslate compares them with
	// the file written).
	Lines []string
	// After are lines written after the section: the <FilesMatch> of the
	// names where sections merged before a <Files> answer otherwise
	// (filesCombos); nil for most.
	After []string
	// Review is why translate could not translate the section
	// mechanically ("" when it did): it then writes 'Require all
	// denied', refusing every request until a person writes the Require.
	Review string
}

// sectionText records what convertSection wrote for s: es as it returned
// them (the first edit replaces the first access line with the text, the
// others delete; any after those append), and its review reason.
func sectionText(s *translate.Section, es []edit, review string) SectionText {
	name := s.Kind.String()
	if s.Directive() != nil {
		name = s.Directive().Name
	}
	return editedText(SectionText{Pos: s.Pos, Name: name, Pattern: s.Pattern, Review: review}, es)
}

// proxyText records what convertProxy wrote for the <Proxy> or
// <ProxyMatch> section d.
func proxyText(d *apacheconf.Directive, es []edit, review string) SectionText {
	return editedText(SectionText{Pos: d.Pos, Name: d.Name, Pattern: d.Raw, Review: review}, es)
}

// editedText fills in st's lines from the edits of its section.
func editedText(st SectionText, es []edit) SectionText {
	if len(es) == 0 {
		return st
	}
	st.At = apacheconf.Pos{File: st.Pos.File, Line: es[0].from}
	indent := ""
	if len(es[0].text) > 0 {
		first := es[0].text[0]
		indent = first[:len(first)-len(strings.TrimLeft(first, " \t"))]
		st.Lines = make([]string, 0, len(es[0].text))
	}
	after := 0
	for _, e := range es[1:] {
		after += len(e.text)
	}
	if after > 0 {
		st.After = make([]string, 0, after)
	}
	for i, e := range es {
		for _, t := range e.text {
			t = strings.TrimPrefix(t, indent)
			if i == 0 {
				st.Lines = append(st.Lines, t)
			} else {
				st.After = append(st.After, t)
			}
		}
	}
	return st
}

// Directives returns the lines of t that are directives (Require lines,
// Require containers, <Limit>, AuthMerging, the settings moved out of a
// container), without translate's comments and the legacy lines it
// comments out, and without indentation.
func Directives(lines []string) []string {
	var out []string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if out == nil {
			out = make([]string, 0, len(lines)-i) // at most the lines left
		}
		out = append(out, l)
	}
	return out
}
