package convert

import (
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// An .htaccess file written for both versions keeps its 2.2 access rules
// in <IfVersion < 2.4> and its 2.4 ones in <IfVersion >= 2.4>. Translated
// under 2.2 semantics, what 2.2 read is the legacy meaning; what the 2.4
// server reads is the other branch, which says what its author thought
// 2.2 meant. The translation of what 2.2 read is written at the top
// level, where every version reads it, before the first such
// <IfVersion>; the access lines inside every <IfVersion> are taken out
// (2.2's were translated, 2.4's are replaced), with a comment.

// accessIfVersions lists the top-level <IfVersion> sections of an
// .htaccess file that hold access rules, when none holds them in a
// <Files> section (whose translation would stay inside the branch).
func accessIfVersions(ds []*apacheconf.Directive) []*apacheconf.Directive {
	var out []*apacheconf.Directive
	for _, d := range ds {
		if d.LowerName() != "ifversion" || !anyAccess(d.Block) {
			continue
		}
		if filesAccess(d.Block) {
			return nil
		}
		out = append(out, d)
	}
	return out
}

// filesAccess reports whether a <Files> or <FilesMatch> section with
// access rules is among ds, at any depth.
func filesAccess(ds []*apacheconf.Directive) bool {
	for _, d := range ds {
		switch n := d.LowerName(); {
		case (n == "files" || n == "filesmatch") && anyAccess(d.Block):
			return true
		case d.Block != nil && filesAccess(d.Block):
			return true
		}
	}
	return false
}

// ifVersionEdits moves the translation of the file's own section (the
// edit with text) out of the <IfVersion> section it landed in, and takes
// out the access lines 2.2 did not read from the blocks.
func ifVersionEdits(es []edit, blocks []*apacheconf.Directive) []edit {
	inside := func(line int) *apacheconf.Directive {
		for _, b := range blocks {
			if b.Pos.Line < line && line <= b.EndLine {
				return b
			}
		}
		return nil
	}
	covered := map[int]bool{}
	var out []edit
	for _, e := range es {
		for l := e.from; l <= e.to; l++ {
			covered[l] = true
		}
		b := inside(e.from)
		if b == nil || len(e.text) == 0 {
			out = append(out, e)
			continue
		}
		indent := leadingBlanks(e.text[0])
		text := []string{"# orderly DIR-10: what Apache 2.2 read in this file's <IfVersion> sections, for every version"}
		for _, t := range e.text {
			text = append(text, strings.TrimPrefix(t, indent))
		}
		var reset []string
		for _, t := range e.withCompat {
			reset = append(reset, strings.TrimPrefix(t, indent))
		}
		out = append(out, edit{from: e.from, to: e.to}, edit{from: b.Pos.Line, to: b.Pos.Line - 1, text: text, withCompat: reset})
	}
	for _, b := range blocks {
		for _, d := range accessLines(b.Block) {
			if covered[d.Pos.Line] {
				continue
			}
			indent := indentAt(d.Pos.Col)
			end := max(d.EndLine, d.Pos.Line)
			lines := "line " + strconv.Itoa(d.Pos.Line)
			if end > d.Pos.Line {
				lines = "lines " + strconv.Itoa(d.Pos.Line) + "-" + strconv.Itoa(end)
			}
			out = append(out, edit{from: d.Pos.Line, to: end, text: []string{
				indent + "# orderly DIR-10: " + d.Name + " (" + lines + ") taken out: the translation outside the <IfVersion> sections decides as Apache 2.2 did"}})
		}
	}
	return out
}

// isAccessLine reports whether d is a line the access translation
// replaces: an access directive or container, or a <Limit> holding only
// those.
func isAccessLine(d *apacheconf.Directive) bool {
	n := d.LowerName()
	return accessName(n) || (n == "limit" || n == "limitexcept") && onlyAccess(d)
}

// accessLines are the access lines of ds (isAccessLine), looking into
// every other section.
func accessLines(ds []*apacheconf.Directive) []*apacheconf.Directive {
	var out []*apacheconf.Directive
	for _, d := range ds {
		switch {
		case isAccessLine(d):
			out = append(out, d)
		case d.Block != nil:
			out = append(out, accessLines(d.Block)...)
		}
	}
	return out
}

// leadingBlanks is the indentation of s.
func leadingBlanks(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}
