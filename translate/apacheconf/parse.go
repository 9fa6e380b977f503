package apacheconf

import (
	"cmp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/orderly-proxy/orderly/internal/par"
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
	line  string // the line it was parsed from, trimmed (see source)
}

// Text returns a plain directive as written: its name, a space and Raw
// (the name alone when Raw is empty). For one parsed from a line written
// so, it is that line, not a copy.
func (d *Directive) Text() string {
	if d.Block == nil && d.line != "" && written(d.line, d.Name, d.Raw) {
		return d.line
	}
	if d.Raw == "" {
		return d.Name
	}
	return d.Name + " " + d.Raw
}

// source returns the line d was read from, trimmed (its logical line:
// continuation lines joined), as httpd resolves ${VAR} references in it and
// splits it into words. For a directive made rather than read, it is the
// line that reads as d.
func (d *Directive) source() string {
	switch {
	case d.line != "" && d.Block != nil:
		line, _, _ := strings.Cut(d.line, "\n")
		return line
	case d.line != "":
		return d.line
	case d.IsSection() && d.Raw == "":
		return "<" + d.Name + ">"
	case d.IsSection():
		return "<" + d.Name + " " + d.Raw + ">"
	}
	return d.Text()
}

// closeLine returns the line that closed the section d, trimmed, when it
// was other than "</Name>" (in any case) or had a '$'; "" otherwise.
func (d *Directive) closeLine() string {
	_, line, _ := strings.Cut(d.line, "\n")
	return line
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
	// Own marks a refusal of orderly's own, where Apache would have gone
	// on: a directive orderly does not evaluate (fail closed).
	Own bool
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
	p.parse(string(src)) // a copy: the tree keeps slices of it
	return p.top, p.errs.Err()
}

// A parser builds the tree of one text, or of one part of a big text
// (parseParts), for the text's tree to take.
type parser struct {
	file  string
	trail []Pos // the Trail of every directive
	top   []*Directive
	open  []*Directive // open sections, outermost first
	// kids are the directives of the open sections, in order: those of
	// open[i] from kidsAt[i] on. A section's move to its Block when it
	// closes, a slice of blockSlab of their number: a section's Block
	// is allocated once, at its length.
	kids      []*Directive
	kidsAt    []int
	blockSlab []*Directive
	errs      ErrorList
	slab      []Directive // directives are allocated from it, many at a time
	argSlab   []string    // the directives' arguments are allocated from it
	lower     lowerNames
	// What the loader has to do with the tree besides keeping it: walk
	// it, where it has directives to evaluate (or a ServerRoot that a
	// part cannot tell is outside every section); otherwise just
	// execute execs, in order (nameKind).
	walk  bool
	execs []*Directive

	// A part of a text (part) leaves the closing tags that close no
	// section of its own to the text's tree: in closes, each with the
	// number of top directives before it. A tag that may close a
	// section of an earlier part, after sections of its own, tangles
	// the part: it is then read with the text, line after line.
	part    bool
	closes  []closeTag
	tangled bool
}

// directiveSlab is how many directives the parser allocates at a time:
// as many as fit in 32 KiB, the largest size class of small objects,
// which a slab then fills but for a few bytes.
const directiveSlab = 32 << 10 / int(unsafe.Sizeof(Directive{}))

// directive returns a new Directive named name, a section or not, with
// its lower-case name and its Trail set (its other fields are for the
// caller to set), and notes what the loader is to do with it.
func (p *parser) directive(name string, section bool) *Directive {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]Directive, 0, directiveSlab)
	}
	p.slab = p.slab[:len(p.slab)+1]
	d := &p.slab[len(p.slab)-1]
	var kind nameKind
	d.Name, d.Trail = name, p.trail
	d.lower, kind = p.lower.of(name)
	switch {
	case kind == evaluated:
		p.walk = true
	case section:
		// Kept, whatever its name.
	case kind == executed || kind == rooted && len(p.open) == 0 && !p.part:
		if p.execs == nil {
			// Room for the modules a configuration loads, most often.
			p.execs = make([]*Directive, 0, 32)
		}
		p.execs = append(p.execs, d)
	case kind == rooted && len(p.open) == 0:
		p.walk = true // the part may be in a section of an earlier one
	}
	return d
}

// lowerNames gives the lower case of directive names, and their kind. A
// configuration spells few names, each many times over: each spelling is
// lowered once, and looked up in a small table, by a hash of it, before
// the map of them all. Each hash has two slots, so that two names with
// the same hash, used in turn, both stay.
type lowerNames struct {
	recent [1 << lowerBits][2]lowerName
	all    map[string]lowerName
}

// A lowerName is a directive name as spelled, in lower case, and its kind.
type lowerName struct {
	name, lower string
	kind        nameKind
}

// lowerBits is the size of nameHash: lowerNames.recent has room for the
// names of a configuration's usual sections, few of which share a hash.
const lowerBits = 5

// of returns name in lower case, and its kind.
func (n *lowerNames) of(name string) (string, nameKind) {
	slots := &n.recent[nameHash(name)]
	for i := range slots {
		if s := &slots[i]; s.name == name { // "", where no name has been put, is its own lower case, of no kind
			return s.lower, s.kind
		}
	}
	l, ok := n.all[name]
	if !ok {
		if n.all == nil {
			n.all = map[string]lowerName{}
		}
		l.name, l.lower = name, strings.ToLower(name)
		l.kind = kindOf(l.lower)
		n.all[name] = l
	}
	slots[1], slots[0] = slots[0], l
	return l.lower, l.kind
}

// nameHash returns a lowerBits hash of a directive name, by its length
// and its first and last four bytes (or each byte of a shorter one),
// which tell most names apart.
func nameHash(s string) uint32 {
	h := uint32(len(s))
	if len(s) < 4 {
		for i := 0; i < len(s); i++ {
			h = h<<8 | uint32(s[i])
		}
	} else {
		e := s[len(s)-4:]
		h ^= uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
		h = h*0x9E3779B1 ^ (uint32(e[0]) | uint32(e[1])<<8 | uint32(e[2])<<16 | uint32(e[3])<<24)
	}
	h *= 0x9E3779B1
	return h >> (32 - lowerBits)
}

// args returns the words of s (words), in the parser's slab of them: a
// big configuration has tens of thousands of directives, whose arguments
// are not each allocated. Each directive's are capped at their length, so
// that appending to them copies them rather than overwriting the next's.
func (p *parser) args(s string) []string {
	// s has at most a word for every two bytes: room for them all, so
	// that the slab is never copied as it grows.
	if most := (len(s) + 1) / 2; cap(p.argSlab)-len(p.argSlab) < most {
		p.argSlab = make([]string, 0, max(1024, most))
	}
	start := len(p.argSlab)
	p.argSlab = appendWords(p.argSlab, s)
	if len(p.argSlab) == start {
		return nil
	}
	return p.argSlab[start:len(p.argSlab):len(p.argSlab)]
}

func (p *parser) errorf(pos Pos, msg string) {
	p.errs = append(p.errs, &Error{Pos: pos, Msg: msg})
}

// add puts d in the innermost open section, or at the top.
func (p *parser) add(d *Directive) {
	if len(p.open) > 0 {
		p.kids = append(p.kids, d)
	} else {
		p.top = append(p.top, d)
	}
}

// push opens the section d, which add has put in place: the directives
// added next are its own until it closes (pop).
func (p *parser) push(d *Directive) {
	p.open = append(p.open, d)
	p.kidsAt = append(p.kidsAt, len(p.kids))
}

// pop closes the open sections but the n outermost ones, innermost
// first, giving each its directives as its Block.
func (p *parser) pop(n int) {
	for i := len(p.open) - 1; i >= n; i-- {
		at := p.kidsAt[i]
		p.open[i].Block = p.block(p.kids[at:])
		p.kids = p.kids[:at]
	}
	p.open, p.kidsAt = p.open[:n], p.kidsAt[:n]
}

// block returns a copy of ds, a section's directives, in the parser's
// slab of them, capped at its length so that appending to it copies it;
// an empty one is not nil (a section's Block never is).
func (p *parser) block(ds []*Directive) []*Directive {
	if len(ds) == 0 {
		return []*Directive{}
	}
	if cap(p.blockSlab)-len(p.blockSlab) < len(ds) {
		p.blockSlab = make([]*Directive, 0, max(1024, len(ds)))
	}
	start := len(p.blockSlab)
	p.blockSlab = append(p.blockSlab, ds...)
	return p.blockSlab[start:len(p.blockSlab):len(p.blockSlab)]
}

// parallelParse is the size from which a file is split and its parts
// lexed on several cores: a generated configuration of thousands of
// virtual hosts is megabytes of lines, each lexed on its own.
const parallelParse = 256 << 10

// parse parses text, in parts on several cores where it is big, and
// sorts the errors.
func (p *parser) parse(text string) {
	p.parseParts(text, min(runtime.GOMAXPROCS(0), len(text)/(parallelParse/2)))
	p.errs.sort()
}

// parseParts parses text in (up to) n parts, on as many cores. The
// tree's lines, names and words are slices of text.
func (p *parser) parseParts(text string, n int) {
	if starts := splitLines(text, n); len(starts) == 1 || !p.readParts(text, starts) {
		p.lex(newLineReader(text, 0))
	}
	for i := len(p.open) - 1; i >= 0; i-- {
		d := p.open[i]
		p.errorf(d.Pos, "<"+d.Name+"> was not closed.")
	}
	p.pop(0) // an unclosed section ends at the end of the file
}

// readParts reads the parts of text that start at starts, each into a
// tree of its own (but for the tags closing sections of earlier parts),
// on as many cores, and puts these together in p's tree, in order: the
// tree of text read line after line. It reports false, with nothing put
// in p's tree, where a part is tangled. p has read nothing yet.
func (p *parser) readParts(text string, starts []int) bool {
	parts := make([]parser, len(starts))
	par.Do(len(starts), func(i int) {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		q := &parts[i]
		// The first part's open sections are the text's: it leaves
		// nothing to the text's tree.
		q.file, q.trail, q.part = p.file, p.trail, i > 0
		r := newLineReader(text[:end], strings.Count(text[:starts[i]], "\n"))
		r.off = max(r.off, starts[i])
		q.lex(r)
	})
	for i := range parts {
		if parts[i].tangled {
			return false
		}
	}
	// The first part's tree is the text's so far.
	*p = parts[0]
	for i := range parts[1:] {
		p.take(&parts[1+i])
	}
	return true
}

// take puts the tree of the part q, which follows what p has read, in
// p's: its top directives, the closing tags it left, in order, and its
// sections still open, with their directives; and its errors in p's.
func (p *parser) take(q *parser) {
	p.errs = append(p.errs, q.errs...)
	p.walk = p.walk || q.walk
	p.execs = append(p.execs, q.execs...)
	at := 0
	for _, c := range q.closes {
		for _, d := range q.top[at:c.after] {
			p.add(d)
		}
		at = c.after
		tag, _ := getWord(c.text)
		p.closeSection(Pos{File: p.file, Line: c.line, Col: c.col}, tag, c.text, c.endLine)
	}
	for _, d := range q.top[at:] {
		p.add(d)
	}
	// The last top directive is the outermost open section, if any.
	for i, d := range q.open {
		p.push(d)
		end := len(q.kids)
		if i+1 < len(q.open) {
			end = q.kidsAt[i+1]
		}
		p.kids = append(p.kids, q.kids[q.kidsAt[i]:end]...)
	}
}

// splitLines returns where n parts of text of about the same size start,
// each at the start of a logical line: after a newline ending a physical
// line that does not continue (neither empty, whose continuation depends
// on the lines before it, nor ending in a backslash). It returns fewer
// where text has no such newline; always at least [0].
func splitLines(text string, n int) []int {
	starts := []int{0}
	for i := 1; i < n; i++ {
		at := max(i*len(text)/n, starts[len(starts)-1])
		for {
			nl := strings.IndexByte(text[at:], '\n')
			if nl < 0 {
				return starts
			}
			at += nl
			line := text[strings.LastIndexByte(text[:at], '\n')+1 : at]
			line = strings.TrimSuffix(line, "\r")
			at++
			if line != "" && line[len(line)-1] != '\\' {
				break
			}
		}
		if at < len(text) && at > starts[len(starts)-1] {
			starts = append(starts, at)
		}
	}
	return starts
}

// A closeTag is a closing tag's line that a part left to the text's tree,
// as closeSection takes it (the tag is the line's first word), and the
// number of the part's top directives before it.
type closeTag struct {
	after              int
	line, col, endLine int
	text               string // the line, trimmed
}

// lex reads r's lines into the tree.
func (p *parser) lex(r *lineReader) {
	for !p.tangled {
		l, ok := r.next()
		if !ok {
			break
		}
		text := trimLeft(l)
		if text == "" || text[0] == '#' {
			continue
		}
		start := len(l) - len(text)
		text = trimRight(text)
		line, col := r.pos(start)
		endLine, _ := r.pos(len(l) - 1)
		name, rest := getWord(text)
		switch {
		case name == "":
			// An empty quoted name: httpd ignores the line.
		case strings.HasPrefix(name, "</"):
			if p.part && len(p.open) == 0 {
				p.closes = append(p.closes, closeTag{len(p.top), line, col, endLine, text})
				break
			}
			p.closeSection(Pos{File: p.file, Line: line, Col: col}, name, text, endLine)
		case name[0] == '<':
			d := p.openSection(Pos{File: p.file, Line: line, Col: col}, name, rest, endLine)
			d.line = text
			p.add(d)
			p.push(d)
		default:
			d := p.directive(name, false)
			d.Args, d.Raw, d.Pos, d.EndLine, d.line = p.args(rest), rest, Pos{File: p.file, Line: line, Col: col}, endLine, text
			p.add(d)
		}
	}
}

// openSection makes the section of a line whose first word is name and
// starts with '<'.
func (p *parser) openSection(pos Pos, name, rest string, endLine int) *Directive {
	name, raw, ok := sectionHeader(name, rest)
	if !ok {
		p.errorf(pos, "<"+name+"> directive missing closing '>'")
	}
	d := p.directive(name, true)
	d.Args, d.Raw, d.Pos, d.Block, d.EndLine = p.args(raw), raw, pos, []*Directive{}, endLine
	return d
}

// sectionHeader returns the name and the arguments of a section whose line
// has first word name (starting with '<') and rest after it. ok is false
// when rest does not end in '>'; raw is then all of rest.
func sectionHeader(name, rest string) (sname, raw string, ok bool) {
	// As ap_build_config_sub: one '>' is cut off the first word, and a
	// line with nothing after the first word has no arguments.
	sname = strings.TrimSuffix(name, ">")[1:]
	if rest == "" {
		return sname, "", true
	}
	// As the section handlers: the arguments end at the last '>'.
	if i := strings.LastIndexByte(rest, '>'); i >= 0 {
		return sname, trimRight(rest[:i]), true
	}
	return sname, rest, false
}

// written reports whether line is name, a space and rest (name alone when
// rest is empty): whether a plain directive's Text is the line it was read
// from. Name and Raw are most often slices of the line, where the
// comparisons stop at their pointers.
func written(line, name, rest string) bool {
	return len(line) == len(name)+min(len(rest), 1)+len(rest) && line[:len(name)] == name &&
		(rest == "" || line[len(name)] == ' ' && line[len(name)+1:] == rest)
}

// closeSection handles a line, text, whose first word is tag and starts
// with "</". Text after the first word is ignored, as httpd does for the
// sections it nests; the sections it evaluates as it reads want the line
// to be the closing tag alone (see closeLine): a closing line other than
// "</Name>" is kept after the section's own line, for them.
func (p *parser) closeSection(pos Pos, tag, text string, endLine int) {
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
		if len(text) != len(inner.Name)+3 || !strings.EqualFold(text[2:len(text)-1], inner.Name) || text[len(text)-1] != '>' ||
			strings.IndexByte(text, '$') >= 0 { // the name may be made by a ${} reference
			inner.line += "\n" + text
		}
		p.pop(len(p.open) - 1)
		return
	}
	if closed {
		p.errorf(pos, "Expected </"+inner.Name+"> but saw </"+name+">")
	}
	// Recover: close up to an enclosing section of that name, if any;
	// otherwise drop the tag. A part cannot tell: the section may be
	// one of an earlier part.
	for i := len(p.open) - 2; i >= 0; i-- {
		if p.open[i].Is(name) {
			p.pop(i)
			return
		}
	}
	p.tangled = p.part
}

// HasTopLevel reports whether src, the text of one configuration file,
// has a directive named name (ignoring case) outside every section. It
// reads no further than the first one, and builds no tree. On a file that
// parses without errors it agrees with [Parse].
func HasTopLevel(src []byte, name string) bool {
	// The text is looked at, not kept: a string over src, not a copy.
	r := newLineReader(unsafe.String(unsafe.SliceData(src), len(src)), 0)
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

// secretDirectives hold credentials in their arguments (lower case): a
// bind password, AuthBasicFake's user and password, a database
// connection string, a session key.
var secretDirectives = map[string]bool{
	"authldapbindpassword": true, "authbasicfake": true, "dbdparams": true,
	"sessioncryptopassphrase": true,
}

// Redacted is what orderly shows of a directive outside the files it
// writes (rules in explain, metrics, the admin page and logs; lint's
// findings): its text, with the arguments of a directive that holds
// credentials masked, and the password of a URL's user information
// ("scheme://user:password@host") masked wherever it appears.
func (d *Directive) Redacted() string {
	if secretDirectives[d.LowerName()] {
		return d.Name + " " + RedactedMark
	}
	return RedactURLPasswords(d.Text())
}

// RedactedMark replaces what a redacted directive holds.
const RedactedMark = "[redacted]"

// RedactURLPasswords masks the password of every "scheme://user:password@"
// in s.
func RedactURLPasswords(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		start := i + 3
		b.WriteString(s[:start])
		s = s[start:]
		// The user information ends at the first '@' before any '/',
		// white space or quote.
		end := strings.IndexAny(s, "/ \t\"'")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			if colon := strings.IndexByte(s[:at], ':'); colon >= 0 {
				b.WriteString(s[:colon+1])
				b.WriteString(RedactedMark)
				s = s[at:]
			}
		}
		i = strings.Index(s, "://")
	}
	b.WriteString(s)
	return b.String()
}
