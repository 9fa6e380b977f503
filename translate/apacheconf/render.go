package apacheconf

import "strings"

// Render returns ds as configuration text that [Parse] reads back as the
// same tree: the same names, arguments and nesting. Sections are indented
// by four spaces a level. Arguments are quoted and escaped only where they
// need to be. Raw, Pos and Trail are not used.
//
// Render expects trees such as Parse and Load return. A name or argument
// holding a line break, a plain directive whose name is empty or starts
// with '<', and a section whose name starts with '/' cannot be written so
// as to read back the same.
func Render(ds []*Directive) string {
	var b strings.Builder
	render(&b, ds, 0)
	return b.String()
}

func render(b *strings.Builder, ds []*Directive, depth int) {
	indent := strings.Repeat("    ", depth)
	for _, d := range ds {
		b.WriteString(indent)
		if !d.IsSection() {
			b.WriteString(quote(d.Name, true, len(d.Args) == 0))
			for i, a := range d.Args {
				b.WriteByte(' ')
				b.WriteString(quote(a, false, i == len(d.Args)-1))
			}
			b.WriteByte('\n')
			continue
		}
		// The first word of the line is "<Name" or "<Name>"; httpd cuts
		// one '>' off it, and the arguments run to the last '>'.
		if simpleSectionName(d.Name) {
			b.WriteString("<" + d.Name)
		} else {
			b.WriteString(tag("<" + d.Name + ">"))
		}
		for _, a := range d.Args {
			b.WriteByte(' ')
			b.WriteString(quote(a, false, false))
		}
		if simpleSectionName(d.Name) || len(d.Args) > 0 {
			b.WriteByte('>')
		}
		b.WriteByte('\n')
		render(b, d.Block, depth+1)
		b.WriteString(indent)
		b.WriteString(tag("</" + d.Name + ">"))
		b.WriteByte('\n')
	}
}

// simpleSectionName reports whether "<name" can be written as it is.
func simpleSectionName(name string) bool {
	return !strings.HasSuffix(name, ">") && !strings.ContainsFunc(name, func(r rune) bool {
		return r == '\\' || r < 0x80 && isSpace(byte(r))
	})
}

// tag returns the first word of a section line, w, written so that it
// reads back as w.
func tag(w string) string {
	if hasSpace(w) {
		return quoted(w)
	}
	return escapeRuns(w, func(int) bool { return false })
}

// quote returns w written as a word. first says whether it is the first word
// of a line, and last whether it is the last.
func quote(w string, first, last bool) string {
	if w == "" || hasSpace(w) || w[0] == '"' || w[0] == '\'' ||
		first && w[0] == '#' ||
		last && w[len(w)-1] == '\\' { // a line ending in a backslash continues
		return quoted(w)
	}
	return escapeRuns(w, func(int) bool { return false })
}

// quoted returns w as a quoted word.
func quoted(w string) string {
	q := byte('"')
	if strings.IndexByte(w, '"') >= 0 && strings.IndexByte(w, '\'') < 0 {
		q = '\''
	}
	s := escapeRuns(w, func(i int) bool { return i == len(w) || w[i] == q })
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte(q)
	return b.String()
}

// escapeRuns doubles backslashes so that httpd's unescaping gives w back.
// httpd turns `\\` into `\` and keeps a lone backslash, so a run of k
// backslashes is written as 2k-1 of them, or as 2k when followed (at the
// byte index i given to paired) by something that a lone backslash would
// escape.
func escapeRuns(w string, paired func(i int) bool) string {
	if strings.IndexByte(w, '\\') < 0 {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); {
		if w[i] != '\\' {
			b.WriteByte(w[i])
			i++
			continue
		}
		j := i
		for j < len(w) && w[j] == '\\' {
			j++
		}
		k := j - i
		n := 2*k - 1
		if paired(j) {
			n = 2 * k
		}
		b.WriteString(strings.Repeat(`\`, n))
		i = j
	}
	return b.String()
}

func hasSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			return true
		}
	}
	return false
}
