package lint

import (
	"errors"
	"fmt"
	"github.com/orderly-proxy/orderly/internal/dirscan"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/convert"
)

// translated is what orderly translate writes for the configuration
// (convert.Convert, the model orderly serve uses): the text of each
// section it translated or refused for review, by position, and the
// sections and .htaccess files it left as they are. lint's DIR-10 fixes
// are these texts, so that the fix lint proposes is the text translate
// writes (issue 17).
type translated struct {
	sections map[secKey]*convert.SectionText
	left     map[secKey]string   // left as they are, with why
	refused  string              // why translate cannot read the configuration ("" when it can)
	conv     *convert.Conversion // nil when refused
	// model is the conversion lint's access findings read the model of:
	// conv, or where translate refuses, what it could read (Partial); nil
	// where it could read nothing.
	model *convert.Conversion
}

// secKey is a section's opening line (an .htaccess file's line 1).
type secKey struct {
	file string
	line int
}

// translating is translate's reading of a configuration for lint, under
// way on another goroutine: its conversion, then what orderly serve
// refuses in it (serveRefusals), each sent once.
type translating struct {
	converted chan *translated
	refusals  chan apacheconf.ErrorList
}

// startTranslated starts translating files with opt, its search for
// .htaccess files through dirs.
func startTranslated(files []string, opt Options, dirs *dirscan.Cache) *translating {
	t := &translating{converted: make(chan *translated, 1), refusals: make(chan apacheconf.ErrorList, 1)}
	go func() {
		conv := translateFiles(files, opt, dirs)
		t.converted <- conv
		t.refusals <- serveRefusals(files, opt, conv.conv)
	}()
	return t
}

// wait waits for the end of t, its results unused.
func (t *translating) wait() {
	<-t.converted
	<-t.refusals
}

// translateFiles runs convert.Convert with the options lint reads the
// configuration with (loadOptions), unfaithful directives forwarded as
// orderly translate does, its search for .htaccess files through dirs.
func translateFiles(files []string, opt Options, dirs *dirscan.Cache) *translated {
	lo := loadOptions(opt)
	lo.ForwardUnfaithful = true // as orderly translate
	lo.Partial = true
	conv, err := convert.Convert(files, convert.Options{LoadOptions: lo, SectionsOnly: true, DirCache: dirs})
	if err != nil {
		var el apacheconf.ErrorList
		if errors.As(err, &el) && len(el) > 0 {
			why := el[0].Error()
			if len(el) > 1 {
				why += fmt.Sprintf(", and %d more", len(el)-1)
			}
			return &translated{refused: why, model: conv}
		}
		return &translated{refused: err.Error(), model: conv}
	}
	t := &translated{sections: map[secKey]*convert.SectionText{}, left: map[secKey]string{}, conv: conv, model: conv}
	for i := range conv.Sections {
		s := &conv.Sections[i]
		t.sections[secKey{s.Pos.File, s.Pos.Line}] = s
	}
	for _, r := range conv.Reviews {
		k := secKey{r.Pos.File, r.Pos.Line}
		if _, ok := t.sections[k]; !ok {
			t.left[k] = r.Text
		}
	}
	return t
}

// A sectionText is what orderly translate wrote for one scope, as the
// scope's findings quote it: worked out once per scope, not for each of
// its lines.
type sectionText struct {
	st     *convert.SectionText // nil where translate wrote nothing for the scope
	writes string               // the directives of st.Lines on one line (joinLines)
}

// text returns what translate wrote for scope s.
func (t *translated) text(s *scope) sectionText {
	st := t.sections[scopeKey(s)]
	if st == nil {
		return sectionText{}
	}
	return sectionText{st, joinLines(convert.Directives(st.Lines))}
}

func scopeKey(s *scope) secKey {
	if s.ht != nil {
		return secKey{s.ht.path, 1}
	}
	return secKey{s.pos.File, s.pos.Line}
}

// requireText returns the Require lines translate wrote for the scope on
// one line, and whether it translated the scope (not refused for review,
// not left as it is).
func (x sectionText) requireText() (string, bool) {
	if x.st == nil || x.st.Review != "" {
		return "", false
	}
	return x.writes, x.writes != ""
}

// dir10Fixes returns the fix of DIR-10 for the Order/Allow/Deny/Satisfy
// line head of scope s (ws names it, x is what translate wrote for it),
// and the fix of the scope's other such lines: what orderly translate
// writes for the section.
func (t *translated) dir10Fixes(s *scope, ws string, head *dir, x sectionText) (fix, part string) {
	at := head.Pos.String()
	st := x.st
	switch {
	case t.refused != "":
		return "orderly translate writes the Require lines of " + ws + " once it can read the configuration, which it refuses now (" + t.refused + "; see ORD-14): fix that first.",
			"Part of " + ws + ", whose fix is at " + at + ": orderly translate refuses the configuration now (see ORD-14)."
	case st != nil && st.Review != "":
		fix = "orderly translate leaves " + ws + " for review (" + st.Review + "): it writes " + x.writes + ", refusing every request until the section is translated by hand."
		return fix, "Part of " + ws + ", left for review at " + at + " (" + st.Review + "): it writes " + x.writes + ", refusing every request until the section is translated by hand."
	case x.writes != "":
		after := ""
		if len(st.After) > 0 {
			after = ", and after the section: " + joinLines(convert.Directives(st.After))
		}
		return "Replace the access directives of " + ws + " with: " + x.writes + after + " (and drop mod_access_compat once every scope is migrated).",
			"Part of " + ws + ", translated at " + at + ": " + x.writes + "."
	}
	why, ok := t.left[scopeKey(s)]
	if !ok {
		why = "it translates <Directory>, <Files>, <Location> and <Proxy> sections and the .htaccess files below the document roots, Alias targets and UserDir directories"
	}
	return "orderly translate leaves " + ws + " as it is (" + why + "): translate it by hand (upgrade document §5.2).",
		"Part of " + ws + ", whose fix is at " + at + ": orderly translate leaves it as it is."
}

// joinLines writes lines of configuration on one line: the lines inside a
// container between its opening and closing tags, the others separated
// by " / ".
func joinLines(lines []string) string {
	n := 0
	for _, l := range lines {
		n += len(l) + len(" / ")
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range lines {
		if i > 0 {
			if prev := lines[i-1]; strings.HasPrefix(prev, "<") && !strings.HasPrefix(prev, "</") || strings.HasPrefix(l, "</") {
				b.WriteByte(' ')
			} else {
				b.WriteString(" / ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
