package apacheconf

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Pos is a position in a configuration file. Line and Col are 1-based; Col
// counts bytes.
type Pos struct {
	File      string
	Line, Col int
}

// String returns "file:line", the form of the command line's "file:line:
// message". It returns just the file name if Line is 0.
func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return p.File + ":" + strconv.Itoa(p.Line)
}

// Directive is one directive or section. Name is as written in the file,
// case kept; compare names with [Directive.Is] (or strings.EqualFold).
//
// A section (<Directory /x>...</Directory>) is a Directive with
// IsSection() == true and Block != nil (Block may be empty but non-nil).
type Directive struct {
	Name  string       // "Order", "Directory", "IfModule" (no angle brackets)
	Args  []string     // unquoted, unescaped arguments
	Raw   string       // the argument text as written after the name (trimmed), e.g. `from 10.1 192.168`, or `"/var/www"` for a section
	Pos   Pos          // where the name starts
	Block []*Directive // the contents of a section; nil for plain directives
	Trail []Pos        // the Include chain: positions of the Include directives that brought this file in, outermost first (empty for the top file)
	// EndLine is the last physical line of the directive: of its last
	// continuation line, or of a section's closing tag.
	EndLine int

	lower string // Name in lower case, when parsed; see LowerName
	line  string // the line it was parsed from, trimmed, when Text is that
}

// Text returns a plain directive as written: its name, a space and Raw
// (the name alone when Raw is empty). For one parsed from a line written
// so, it is that line, not a copy.
func (d *Directive) Text() string {
	if d.line != "" || d.Raw == "" && d.Name == "" {
		return d.line
	}
	if d.Raw == "" {
		return d.Name
	}
	return d.Name + " " + d.Raw
}

// LowerName returns the name in lower case. For a parsed directive it is
// worked out once per distinct spelling, not for every call.
func (d *Directive) LowerName() string {
	if d.lower != "" || d.Name == "" {
		return d.lower
	}
	return strings.ToLower(d.Name)
}

// IsSection reports whether d is a section (<Name ...> ... </Name>).
func (d *Directive) IsSection() bool { return d.Block != nil }

// Is reports whether d's name is name, ignoring case, as httpd does.
func (d *Directive) Is(name string) bool { return strings.EqualFold(d.Name, name) }

// Error is an input error at a position.
type Error struct {
	Pos   Pos
	Msg   string
	Trail []Pos // the Include chain that led to Pos.File, outermost first
}

// Error returns "file:line: msg". If the file was included, the innermost
// Include comes last: "b.conf:3: msg (included from a.conf:2, httpd.conf:12)".
func (e *Error) Error() string {
	var b strings.Builder
	if p := e.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	for i := len(e.Trail) - 1; i >= 0; i-- {
		if i == len(e.Trail)-1 {
			b.WriteString(" (included from ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(e.Trail[i].String())
	}
	if len(e.Trail) > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// ErrorList is a list of errors. It implements error.
type ErrorList []*Error

// Error returns all the errors, one a line, sorted by file and then line.
func (l ErrorList) Error() string {
	l = slices.Clone(l)
	l.sort()
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// sort sorts l by file, line and column, keeping the order of errors at the
// same position.
func (l ErrorList) sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(
			strings.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col),
		)
	})
}

// Parse parses one configuration file: it splits src into directives and
// nests sections. It does not follow Include and does not evaluate
// <IfModule> or <IfDefine>; see [Load] for that.
//
// Parse returns the tree and, if src has errors, an [ErrorList] with all of
// them. The tree is what httpd would build were each error not fatal: an
// unclosed section ends at the end of the file, and a closing tag that
// matches no open section is dropped.
func Parse(filename string, src []byte) ([]*Directive, error) {
	p := &parser{file: filename}
	p.parse(src)
	p.errs.sort()
	return p.top, p.errs.Err()
}

type parser struct {
	file string
	top  []*Directive
	open []*Directive // open sections, outermost first
	errs ErrorList
	slab []Directive // directives are allocated from it, many at a time
	// lower maps each spelling of a name met to its lower case.
	lower map[string]string
}

// directive returns a new Directive set to d.
func (p *parser) directive(d Directive) *Directive {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]Directive, 0, 128)
	}
	l, ok := p.lower[d.Name]
	if !ok {
		if p.lower == nil {
			p.lower = map[string]string{}
		}
		l = strings.ToLower(d.Name)
		p.lower[d.Name] = l
	}
	d.lower = l
	p.slab = append(p.slab, d)
	return &p.slab[len(p.slab)-1]
}

func (p *parser) errorf(pos Pos, msg string) {
	p.errs = append(p.errs, &Error{Pos: pos, Msg: msg})
}

func (p *parser) add(d *Directive) {
	if n := len(p.open); n > 0 {
		p.open[n-1].Block = append(p.open[n-1].Block, d)
	} else {
		p.top = append(p.top, d)
	}
}

func (p *parser) parse(src []byte) {
	r := newLineReader(src)
	for {
		l, ok := r.next()
		if !ok {
			break
		}
		text := trimLeft(l)
		start := len(l) - len(text)
		text = trimRight(text)
		if text == "" || text[0] == '#' {
			continue
		}
		line, col := r.pos(start)
		endLine, _ := r.pos(max(len(l)-1, 0))
		pos := Pos{File: p.file, Line: line, Col: col}
		name, rest := getWord(text)
		switch {
		case name == "":
			// An empty quoted name: httpd ignores the line.
		case strings.HasPrefix(name, "</"):
			p.closeSection(pos, name, endLine)
		case name[0] == '<':
			p.openSection(pos, name, rest, endLine)
		default:
			d := Directive{Name: name, Args: words(rest), Raw: rest, Pos: pos, EndLine: endLine}
			if written := len(name) + min(len(rest), 1) + len(rest); len(text) == written && text[:len(name)] == name &&
				(rest == "" || text[len(name)] == ' ' && text[len(name)+1:] == rest) {
				d.line = text
			}
			p.add(p.directive(d))
		}
	}
	for i := len(p.open) - 1; i >= 0; i-- {
		d := p.open[i]
		p.errorf(d.Pos, "<"+d.Name+"> was not closed.")
	}
}

// openSection handles a line whose first word is name and starts with '<'.
func (p *parser) openSection(pos Pos, name, rest string, endLine int) {
	// As ap_build_config_sub: one '>' is cut off the first word, and a
	// line with nothing after the first word has no arguments.
	name = strings.TrimSuffix(name, ">")[1:]
	raw := ""
	if rest != "" {
		// As the section handlers: the arguments end at the last '>'.
		if i := strings.LastIndexByte(rest, '>'); i >= 0 {
			raw = trimRight(rest[:i])
		} else {
			p.errorf(pos, "<"+name+"> directive missing closing '>'")
			raw = rest
		}
	}
	d := p.directive(Directive{Name: name, Args: words(raw), Raw: raw, Pos: pos, Block: []*Directive{}, EndLine: endLine})
	p.add(d)
	p.open = append(p.open, d)
}

// closeSection handles a line whose first word is tag and starts with "</".
// Text after the first word is ignored, as httpd does.
func (p *parser) closeSection(pos Pos, tag string, endLine int) {
	name, closed := strings.CutSuffix(tag[2:], ">")
	if len(p.open) == 0 {
		p.errorf(pos, "</"+name+"> without matching <"+name+"> section")
		return
	}
	if !closed {
		p.errorf(pos, "</"+name+"> directive missing closing '>'")
	}
	inner := p.open[len(p.open)-1]
	if inner.Is(name) {
		inner.EndLine = endLine
		p.open = p.open[:len(p.open)-1]
		return
	}
	if closed {
		p.errorf(pos, "Expected </"+inner.Name+"> but saw </"+name+">")
	}
	// Recover: close up to an enclosing section of that name, if any;
	// otherwise drop the tag.
	for i := len(p.open) - 2; i >= 0; i-- {
		if p.open[i].Is(name) {
			p.open = p.open[:i]
			return
		}
	}
}

// HasTopLevel reports whether src, the text of one configuration file,
// has a directive named name (ignoring case) outside every section. It
// reads no further than the first one, and builds no tree. On a file that
// parses without errors it agrees with [Parse].
func HasTopLevel(src []byte, name string) bool {
	r := newLineReader(src)
	depth := 0
	for {
		l, ok := r.next()
		if !ok {
			return false
		}
		text := trimLeft(l)
		if text == "" || text[0] == '#' {
			continue
		}
		switch w, _ := getWord(text); {
		case w == "":
		case strings.HasPrefix(w, "</"):
			depth = max(depth-1, 0)
		case w[0] == '<':
			depth++
		case depth == 0 && strings.EqualFold(w, name):
			return true
		}
	}
}
