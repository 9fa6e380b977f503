package apacheconf

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// This file holds what httpd evaluates while it reads a configuration,
// beyond Include and <IfModule>/<IfDefine> (load.go): the version that
// decides which of these exist, <IfVersion> (modules/metadata/
// mod_version.c), <IfFile>, <IfDirective> and <IfSection> (server/core.c
// start_cond_section), ${VAR} references (server/core.c ap_resolve_env in
// 2.4, server/util.c in 2.2) and mod_macro's <Macro>, Use and UndefMacro
// (modules/core/mod_macro.c). The tests are in preprocess_test.go.

// defaultVersion is the version a configuration is read as when
// Options.Version is empty: Debian's apache2.
const defaultVersion = "2.4.71"

// A version is an httpd version: MAJOR.MINOR.PATCH and the tag after it
// (AP_SERVER_ADD_STRING, "-dev"), as ap_get_server_revision gives it.
type version struct {
	major, minor, patch int
	add                 string
}

// parseVersion reads Options.Version.
func parseVersion(s string) (version, error) {
	if s == "" {
		s = defaultVersion
	}
	var v version
	rest := s
	for i, p := range []*int{&v.major, &v.minor, &v.patch} {
		if i > 0 {
			r, ok := strings.CutPrefix(rest, ".")
			if !ok {
				break
			}
			rest = r
		}
		n := 0
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			n++
		}
		x, err := strconv.Atoi(rest[:n])
		if err != nil || x > 1<<20 {
			return version{}, errors.New("apacheconf: bad Version " + strconv.Quote(s) + ": want MAJOR.MINOR.PATCH, such as 2.2.34 or 2.4.71")
		}
		*p, rest = x, rest[n:]
	}
	if rest != "" && (rest[0] == '.' || '0' <= rest[0] && rest[0] <= '9') {
		return version{}, errors.New("apacheconf: bad Version " + strconv.Quote(s) + ": want MAJOR.MINOR.PATCH, such as 2.2.34 or 2.4.71")
	}
	v.add = rest
	if v.major != 2 || v.minor != 2 && v.minor != 4 {
		return version{}, errors.New("apacheconf: unsupported Version " + strconv.Quote(s) + ": only 2.2 and 2.4 are known")
	}
	return v, nil
}

// atLeast reports whether v is major.minor.patch or later.
func (v version) atLeast(major, minor, patch int) bool {
	switch {
	case v.major != major:
		return v.major > major
	case v.minor != minor:
		return v.minor > minor
	}
	return v.patch >= patch
}

func (v version) is22() bool { return !v.atLeast(2, 4, 0) }

// State is what reading a configuration leaves in force once it is read:
// the server root, the defined names and their values, the modules loaded
// and the macros defined. httpd reads .htaccess files with it while it
// serves: pass it as Options.State to [Conditionals] for them. Get it
// from [LoadState]. A State is not changed by its use and may be shared.
type State struct {
	root     string
	defines  map[string]bool
	vars     map[string]string // by name in lower case, as an APR table
	modules  map[string]bool
	macros   map[string]*macro
	anyMacro bool // a <Macro> was read (mod_macro's ap_macros is set)
}

// ServerRoot returns the server root in force at the end.
func (s *State) ServerRoot() string { return s.root }

// Defined reports whether name is defined (by -D or Define), for
// <IfDefine>: as in httpd, names are case-sensitive.
func (s *State) Defined(name string) bool { return s.defines[name] }

// Var returns the value of the variable name, as ${name} resolves it
// before the environment: the value of the last Define that gave name a
// value. As in httpd, the name is case-insensitive (ASCII).
func (s *State) Var(name string) (string, bool) {
	v, ok := s.vars[lowerASCII(name)]
	return v, ok
}

// Loaded reports whether the module (by identifier, "rewrite_module", or
// source name, "mod_rewrite.c") is loaded, built-in ones included.
func (s *State) Loaded(module string) bool { return s.modules[module] }

// state returns the loader's state, copied.
func (l *loader) state() *State {
	s := &State{root: l.root, defines: clone(l.defines), vars: clone(l.vars), modules: clone(l.modules),
		macros: clone(l.macros), anyMacro: l.anyMacro}
	return s
}

func clone[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// lowerASCII lowers the ASCII letters of s, as httpd's ap_str_tolower and
// APR's case-insensitive tables (in the C locale).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// warn records a warning httpd would log while reading.
func (l *loader) warn(pos Pos, trail []Pos, msg string) {
	l.warns = append(l.warns, &Error{Pos: pos, Msg: msg, Trail: trail})
}

// loaded reports whether the module with identifier id is loaded.
func (l *loader) loaded(id string) bool { return l.modules[id] }

// evaluates reports whether the construct whose lower-case name is n (a
// section's without '<') exists, as the version and the modules loaded
// so far have it, and is evaluated here.
func (l *loader) evaluates(n string) bool {
	switch n {
	case "ifmodule", "ifdefine":
		return true
	case "ifversion":
		return l.loaded("version_module")
	case "iffile":
		return l.ver.atLeast(2, 4, 34)
	case "ifdirective", "ifsection":
		return l.ver.atLeast(2, 4, 34) && l.opt.Known != nil
	case "macro", "use", "undefmacro":
		return l.ver.atLeast(2, 4, 5) && l.loaded("macro_module")
	}
	return false
}

// condCommands are httpd's names and descriptions of the conditional
// sections of start_cond_section (the descriptions are in the messages
// of the versions where they take one argument).
var condCommands = map[string]struct{ name, desc string }{
	"ifmodule":    {"<IfModule", "Container for directives based on existence of specified modules"},
	"ifdefine":    {"<IfDefine", "Container for directives based on existence of command line defines"},
	"iffile":      {"<IfFile", "Container for directives based on existence of files on disk"},
	"ifdirective": {"<IfDirective", "Container for directives based on existence of named directive"},
	"ifsection":   {"<IfSection", "Container for directives based on existence of named section"},
}

// sectionArgs returns the arguments of the section d as httpd's section
// handlers get them: the text of its line after the first word, its
// closing '>' and anything after it included; ">" when there is none.
func sectionArgs(d *Directive) string {
	_, rest := getWord(d.source())
	if rest == "" {
		return ">"
	}
	return rest
}

// holds evaluates the condition of the conditional section d, whose
// lower-case name is n, and returns an error message if httpd refuses it.
func (l *loader) holds(d *Directive, n string) (bool, string) {
	if n == "ifversion" {
		return l.ifVersion(sectionArgs(d))
	}
	cmd := condCommands[n]
	args := sectionArgs(d)
	if !l.ver.atLeast(2, 4, 35) {
		// TAKE1 before 2.4.35 (server/config.c invoke_cmd): one word,
		// its quotes removed, then cut at its last '>'.
		w, rest := getWord(args)
		if w == "" || rest != "" {
			desc := cmd.desc
			if l.ver.is22() {
				desc = strings.Replace(desc, "existence", "existance", 1) // sic, 2.2's core.c
			}
			return false, cmd.name + " takes one argument, " + desc
		}
		args = w
	}
	end := strings.LastIndexByte(args, '>')
	if end < 0 {
		return false, cmd.name + "> directive missing closing '>'"
	}
	arg := args[:end]
	not := strings.HasPrefix(arg, "!")
	if not {
		arg = arg[1:]
	}
	if l.ver.atLeast(2, 4, 35) {
		// RAW_ARGS since 2.4.35: the first word, quotes removed.
		arg, _ = getWord(arg)
	}
	if arg == "" {
		return false, cmd.name + "> directive requires additional arguments"
	}
	var ok bool
	switch n {
	case "ifmodule":
		ok = l.modules[arg]
	case "ifdefine":
		ok = l.defines[arg]
	case "iffile":
		// ap_server_root_relative and apr_stat, which follows links.
		_, err := l.opt.Stat(l.resolve(arg))
		ok = err == nil
	case "ifdirective":
		// ap_exists_directive looks the name up as given: "<Name" is
		// the section.
		if s, isSection := strings.CutPrefix(arg, "<"); isSection {
			ok = l.opt.Known(s, true)
		} else {
			ok = l.opt.Known(arg, false)
		}
	case "ifsection":
		ok = !strings.HasPrefix(arg, "<") && l.opt.Known(arg, true)
	}
	return ok != not, ""
}

// checkClose checks the line closing the conditional section d (lower-case
// name n), which holds: httpd reads its contents until a line that is
// exactly its closing tag, in any case (ap_build_cont_config), and takes
// another line closing it (with words after the tag, or a tag made by a
// ${} reference) as a closing tag of its own, with no section open.
func (l *loader) checkClose(d *Directive, n string) {
	line, name := d.closeLine(), "<IfVersion"
	if n != "ifversion" {
		name = condCommands[n].name
	}
	if line == "" || len(line) == len(name)+2 && strings.EqualFold(line[2:len(line)-1], name[1:]) && line[:2] == "</" && line[len(line)-1] == '>' {
		return
	}
	pos := Pos{File: d.Pos.File, Line: d.EndLine, Col: 1}
	tag, _ := getWord(l.resolveEnv(line, pos, d.Trail))
	l.errorf(pos, d.Trail, tag+" without matching <"+tag[2:]+" section")
}

// ifVersion evaluates <IfVersion> with the arguments args, as mod_version's
// start_ifversion (TAKE123), and returns an error message if httpd refuses
// it.
func (l *loader) ifVersion(args string) (bool, string) {
	w1, rest := getWord(args)
	var w2, w3 string
	has2, has3 := rest != "", false
	if has2 {
		w2, rest = getWord(rest)
		if has3 = rest != ""; has3 {
			w3, rest = getWord(rest)
		}
	}
	if w1 == "" || rest != "" {
		return false, "<IfVersion takes one, two or three arguments, a comparison operator, a version (and a delimiter)"
	}
	arg1, arg2, arg3 := w1, w2, w3
	if !has2 { // one argument: an equality check
		arg1, arg2 = "=", arg1
	}
	if !has3 && arg2 == ">" { // a quoted version without an operator
		arg1, arg2, arg3, has3 = "=", arg1, ">", true
	}
	// The version ends before the '>' closing it, unless that is a
	// third argument of its own.
	closed := has3 && arg3 == ">"
	end := len(arg2)
	if end == 0 || !closed && arg2[end-1] != '>' {
		return false, "<IfVersion> directive missing closing '>'"
	}
	if !closed {
		end--
	}
	op, reverse := arg1, false
	if op[0] == '!' {
		reverse = true
		if len(op) > 1 {
			op = op[1:]
		}
	}
	c, p := op[0], op[1:]
	match, done := false, false
	if p == "" || p == "=" && c != '~' {
		done = true
		switch c {
		case '=':
			if arg2[0] != '/' {
				cmp, ok := compareVersion(arg2[:end], l.ver)
				if !ok {
					return false, badVersion
				}
				match = cmp == 0
				break
			}
			// A regular expression between slashes.
			arg2, end = arg2[1:], end-1
			if end == 0 || arg2[end-1] != '/' {
				return false, "Missing delimiting / of regular expression."
			}
			end--
			fallthrough
		case '~':
			re, err := regexp.Compile(arg2[:end])
			if err != nil {
				return false, "Unable to compile regular expression"
			}
			match = re.MatchString(strconv.Itoa(l.ver.major) + "." + strconv.Itoa(l.ver.minor) + "." + strconv.Itoa(l.ver.patch) + l.ver.add)
		case '<', '>':
			cmp, ok := compareVersion(arg2[:end], l.ver)
			if !ok {
				return false, badVersion
			}
			want := -1
			if c == '>' {
				want = 1
			}
			match = cmp == want || p != "" && cmp == 0
		default:
			done = false
		}
	}
	if !done {
		return false, "unrecognized operator '" + arg1 + "'"
	}
	return match != reverse, ""
}

const badVersion = "Version appears to be invalid. It must have the format major[.minor[.patch]] where major, minor and patch are numbers."

// compareVersion compares v with the version s, as mod_version's
// compare_version: -1, 0 or 1 as v is older, the same or newer. s is
// major[.minor[.patch]], missing parts 0; ok is false when s is not that.
// Like httpd, it takes an empty part for 0 ("2..4" is 2.0.4) and each
// part as atoi does (the low 32 bits of a number too big).
func compareVersion(s string, v version) (cmp int, ok bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	var parts [3]int
	n, start, p := 0, 0, 0
	for p <= len(s) && n < 3 {
		if p == len(s) || s[p] == '.' {
			parts[n] = atoi(s[start:p])
			n++
			p++
			start = p
			continue
		}
		if s[p] < '0' || s[p] > '9' {
			break
		}
		p++
	}
	if p < len(s) {
		return 0, false
	}
	for i, have := range [3]int{v.major, v.minor, v.patch} {
		switch {
		case have > parts[i]:
			return 1, true
		case have < parts[i]:
			return -1, true
		}
	}
	return 0, true
}

// atoi converts the digits s as glibc's atoi: strtol, which stops at
// LONG_MAX, cast to a 32-bit int.
func atoi(s string) int {
	var x uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if x > (1<<63-1-d)/10 {
			x = 1<<63 - 1
			break
		}
		x = x*10 + d
	}
	return int(int32(uint32(x)))
}

// resolveEnv returns the line s with its ${NAME} references replaced, as
// httpd's ap_resolve_env: by the value of a variable that Define set (2.4
// only; the names of these are case-insensitive), else by that of the
// environment variable; a reference to neither is left as it is, which
// 2.4 warns of (AH00111) unless the name has a ':'. A "${" with no '}'
// after it is no reference.
func (l *loader) resolveEnv(s string, pos Pos, trail []Pos) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		name := s[i+2 : i+2+j]
		b.WriteString(s[:i])
		v, ok := "", false
		if !l.ver.is22() {
			v, ok = l.vars[lowerASCII(name)]
		}
		if !ok {
			v, ok = l.opt.Getenv(name)
		}
		if ok {
			b.WriteString(v)
		} else {
			if !l.ver.is22() && !strings.Contains(name, ":") {
				l.warn(pos, trail, "AH00111: Config variable ${"+name+"} is not defined")
			}
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s)
	return b.String()
}

// mayRefer reports whether a line of text may hold a ${NAME} reference:
// whether text has "${", or a '$' before a backslash, which may end a
// line that the next one continues with a '{'.
func mayRefer(text string) bool {
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '$')
		if j < 0 || i+j+1 == len(text) {
			return false
		}
		i += j + 1
		if c := text[i]; c == '{' || c == '\\' {
			return true
		}
	}
}

// expandVars returns d with the ${VAR} references of its line resolved:
// httpd resolves a line before it splits it into words, so a value with
// spaces makes more words, and one may make the name. It returns d itself
// when its line has none, and nil when the line it makes is empty. The
// result keeps d's Pos, Trail, EndLine and Block.
func (l *loader) expandVars(d *Directive) *Directive {
	src := d.source()
	if !strings.Contains(src, "${") {
		return d
	}
	text := l.resolveEnv(src, d.Pos, d.Trail)
	if text == src {
		return d
	}
	text = trimRight(trimLeft(text))
	name, rest := getWord(text)
	if name == "" {
		return nil // httpd ignores a line with an empty first word
	}
	nd := &Directive{Pos: d.Pos, Trail: d.Trail, EndLine: d.EndLine}
	isTag := name[0] == '<'
	switch {
	case d.IsSection() && (!isTag || strings.HasPrefix(name, "</")),
		!d.IsSection() && isTag:
		// httpd nests sections by the lines as they read once
		// resolved; the tree was nested as they were written.
		l.errorf(d.Pos, d.Trail, "unsupported: once its ${} references are resolved, this line reads "+strconv.Quote(text)+", and Apache nests the sections around it otherwise than they are written")
		return nil
	case d.IsSection():
		sname, raw, ok := sectionHeader(name, rest)
		if !ok {
			l.errorf(d.Pos, d.Trail, "<"+sname+"> directive missing closing '>'")
		}
		nd.Name, nd.Raw, nd.Block = sname, raw, d.Block
	default:
		nd.Name, nd.Raw = name, rest
	}
	nd.Args, nd.line = words(nd.Raw), text
	if end := d.closeLine(); end != "" {
		nd.line += "\n" + end
	}
	nd.lower = strings.ToLower(nd.Name)
	return nd
}

// mod_macro's limits and names (modules/core/mod_macro.c).
const (
	maxStringLen = 8192 // MAX_STRING_LEN: a macro's lines, substituted
	argPrefix    = "$%@"
)

// A macro is a <Macro> definition, as mod_macro keeps it.
type macro struct {
	name     string   // in lower case
	args     []string // the parameter names
	lines    []macroLine
	location string // `defined on line N of "FILE"`
}

// A macroLine is a line of a macro's body, as written (not resolved), and
// where it is.
type macroLine struct {
	text string
	pos  Pos
	end  int // the last line it spans (EndLine)
}

// bodyLines appends the lines of ds, a <Macro> section's contents read
// but not evaluated, to out: each directive's line, and a section's line,
// contents and closing tag. mod_macro keeps a body's lines as they are
// and parses them at each Use; comments are dropped, as it does.
func bodyLines(ds []*Directive, out []macroLine) []macroLine {
	for _, d := range ds {
		out = append(out, macroLine{text: d.source(), pos: d.Pos, end: d.EndLine})
		if d.IsSection() {
			out[len(out)-1].end = d.Pos.Line
			out = bodyLines(d.Block, out)
			end := d.closeLine()
			if end == "" {
				end = tag("</" + d.Name + ">")
			}
			out = append(out, macroLine{text: end, pos: Pos{File: d.Pos.File, Line: d.EndLine, Col: d.Pos.Col}, end: d.EndLine})
		}
	}
	return out
}

// nonBlank reports whether s has more than spaces and tabs before a '#' or
// its end, as mod_macro's warn_if_non_blank.
func nonBlank(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return s != "" && s[0] != '#'
}

func looksLikeArgument(w string) bool { return w != "" && strings.IndexByte(argPrefix, w[0]) >= 0 }

// defineMacro reads the <Macro> section d (its line resolved, its contents
// not), as mod_macro's macro_section.
func (l *loader) defineMacro(d *Directive, f frame) {
	l.anyMacro = true
	fail := func(msg string) { l.errorf(d.Pos, d.Trail, msg) }
	warn := func(msg string) { l.warn(d.Pos, d.Trail, msg) }
	args := sectionArgs(d)
	end := strings.LastIndexByte(args, '>')
	switch {
	case end < 0:
		return // the parser said "<Macro> directive missing closing '>'"
	case end == 0:
		fail("<Macro macro definition: empty name")
		return
	}
	line := strconv.Itoa(d.Pos.Line)
	if after := args[end+1:]; nonBlank(after) {
		warn("AH02989: AH02801: non blank chars found after <Macro closing '>' on line " + line + " of " + f.file + ": " + after)
	}
	name, rest := getWord(args[:end])
	if name == "" {
		fail("<Macro macro definition: name not found")
		return
	}
	name = lowerASCII(name)
	m := &macro{name: name, location: "defined on line " + line + " of \"" + f.file + "\""}
	if old := l.macros[name]; old != nil {
		warn("AH02802: macro '" + name + "' multiply defined: " + old.location + ", redefined on line " + line + " of \"" + f.file + "\"")
	}
	where := "macro '" + name + "' (" + m.location + ")"
	if looksLikeArgument(name) {
		warn("AH02803: " + where + " better prefix a macro name with any of '" + argPrefix + "'")
	}
	m.args = words(rest)
	// check_macro_arguments
	for i, a := range m.args {
		if a == "" {
			fail("macro '" + name + "' (" + m.location + "): empty argument #" + strconv.Itoa(i+1) + " name")
			return
		}
		if !looksLikeArgument(a) {
			warn("AH02796: " + where + " argument name '" + a + "' (#" + strconv.Itoa(i+1) + ") without expected prefix, better prefix argument names with one of '" + argPrefix + "'.")
		}
		for j := i + 1; j < len(m.args); j++ {
			b := m.args[j]
			if a == b {
				fail("argument name conflict in macro '" + name + "' (" + m.location + "): argument '" + a + "': #" + strconv.Itoa(i+1) + " and #" + strconv.Itoa(j+1) + ", change argument names!")
				return
			}
			if b != "" && a[:min(len(a), len(b))] == b[:min(len(a), len(b))] {
				warn("AH02797: macro '" + name + "' (" + m.location + "): argument name prefix conflict (" + a + " #" + strconv.Itoa(i+1) + " and " + b + " #" + strconv.Itoa(j+1) + "), be careful about your macro definition!")
			}
		}
	}
	if end := d.closeLine(); end != "" {
		if i := strings.LastIndexByte(end, '>'); i >= 0 {
			if after := end[i+1:]; nonBlank(after) {
				l.warn(d.Pos, d.Trail, "AH02989: AH02794: non blank chars found after directive closing on line "+strconv.Itoa(d.EndLine)+" of "+f.file+": "+after)
			}
		}
	}
	m.lines = bodyLines(d.Block, nil)
	for _, ml := range m.lines {
		// ap_cfg_getline into a MAX_STRING_LEN buffer: a longer line
		// ends the reading of the body.
		if len(ml.text) >= maxStringLen-1 {
			fail(where + "\n\tcontents error: expected token not found: </Macro>")
			return
		}
	}
	// check_macro_contents
	if len(m.lines) == 0 {
		warn("AH02799: " + where + ": empty contents!")
	} else {
		used := make([]bool, len(m.args))
		m.substitute(m.args, used) // the names for themselves: never fails
		for i, u := range used {
			if !u {
				warn("AH02800: " + where + ": argument '" + m.args[i] + "' (#" + strconv.Itoa(i+1) + ") never used")
			}
		}
	}
	l.macros[name] = m
}

// undefMacro runs UndefMacro d, as mod_macro's undef_macro (TAKE1).
func (l *loader) undefMacro(d *Directive) {
	fail := func(msg string) { l.errorf(d.Pos, d.Trail, msg) }
	if len(d.Args) != 1 || d.Args[0] == "" {
		fail("UndefMacro takes one argument, Remove a macro definition.")
		return
	}
	if !l.anyMacro {
		fail("no macro defined before UndefMacro")
		return
	}
	name := lowerASCII(d.Args[0])
	if l.macros[name] == nil {
		fail("cannot remove undefined macro '" + name + "'")
		return
	}
	delete(l.macros, name)
}

// useMacro expands Use d (its line resolved), as mod_macro's use_macro:
// the macro's lines with the arguments substituted are read as
// configuration in its place. Their directives are at their lines in the
// <Macro> body, with d at the end of their Trail.
func (l *loader) useMacro(d *Directive, f frame) []*Directive {
	fail := func(msg string) { l.errorf(d.Pos, d.Trail, msg) }
	if !l.anyMacro {
		fail("no macro defined before Use")
		return nil
	}
	name, rest := getWord(d.Raw)
	name = lowerASCII(name)
	if name == "" {
		fail("no macro name specified with Use")
		return nil
	}
	m := l.macros[name]
	if m == nil {
		fail("macro '" + name + "' undefined")
		return nil
	}
	// As mod_macro, by the name of the "file" being read, which names
	// every macro whose expansion it is in.
	if strings.Contains(f.file, "macro '"+m.name+"'") {
		fail("recursive use of macro '" + m.name + "' is invalid")
		return nil
	}
	repl := words(rest)
	if len(repl) != len(m.args) {
		fail("macro '" + m.name + "' (" + m.location + ") used with " + strconv.Itoa(len(repl)) + " arguments instead of " + strconv.Itoa(len(m.args)))
		return nil
	}
	where := "macro '" + m.name + "' (" + m.location + ") used on line " + strconv.Itoa(max(d.EndLine, d.Pos.Line)) + " of \"" + f.file + "\""
	for i, r := range repl {
		if r == "" {
			l.warn(d.Pos, d.Trail, "AH02798: "+where+": empty argument #"+strconv.Itoa(i+1))
		}
	}
	lines, msg := m.substitute(repl, nil)
	if msg != "" {
		fail(where + " error while substituting: " + msg)
		return nil
	}
	text := strings.Join(lines, "")
	if l.bytes += len(text); l.bytes > maxBytes {
		l.abort = true
		l.errorf(Pos{}, nil, "too much configuration to read (more than "+strconv.Itoa(maxBytes>>20)+" MiB); is there an Include loop?")
		return nil
	}
	// The synthetic file's line k comes from the macro's line of[k-1]
	// (a value from the environment may hold a newline).
	var of []int
	for i, s := range lines {
		for range strings.Count(s, "\n") {
			of = append(of, i)
		}
	}
	trail := append(clipPos(d.Trail), d.Pos)
	errs0, warns0 := len(l.errs), len(l.warns)
	out := l.readText(text, frame{trail: trail, inSection: f.inSection, file: where})

	// Put what came of the synthetic file at the lines of the body.
	at := func(line int) macroLine {
		if len(m.lines) == 0 {
			return macroLine{}
		}
		i := len(m.lines) - 1
		if line >= 1 && line <= len(of) {
			i = of[line-1]
		}
		return m.lines[i]
	}
	fix := func(p *Pos) {
		if p.File == where {
			*p = at(p.Line).pos
		}
	}
	fixTrail := func(t []Pos) {
		for i := range t {
			fix(&t[i])
		}
	}
	Walk(out, func(d *Directive, _ []*Directive) error {
		if d.Pos.File == where {
			d.EndLine = at(d.EndLine).end
		}
		fix(&d.Pos)
		fixTrail(d.Trail)
		return nil
	})
	for _, e := range l.errs[errs0:] {
		fix(&e.Pos)
		fixTrail(e.Trail)
	}
	for _, e := range l.warns[warns0:] {
		fix(&e.Pos)
		fixTrail(e.Trail)
	}
	for _, mm := range l.macros { // defined in the expansion
		for i := range mm.lines {
			if ml := &mm.lines[i]; ml.pos.File == where {
				ml.end = at(ml.end).end
				fix(&ml.pos)
			}
		}
	}
	return out
}

func clipPos(t []Pos) []Pos { return t[:len(t):len(t)] }

// substitute returns the lines of m with its parameters replaced by repl,
// each line with its end of line, as mod_macro's process_content. If used
// is not nil, it marks the parameters met. It returns httpd's message for
// a line that grows too long.
func (m *macro) substitute(repl []string, used []bool) ([]string, string) {
	out := make([]string, len(m.lines))
	for i, ml := range m.lines {
		line := ml.text + "\n"
		if len(line) > maxStringLen-1 { // apr_cpystrn
			line = line[:maxStringLen-1]
		}
		s, msg := substituteArgs(line, m.args, repl, used)
		if msg != "" {
			return nil, "while processing line " + strconv.Itoa(i+1) + " of macro '" + m.name + "' (" + m.location + ") " + msg
		}
		out[i] = s
	}
	return out, ""
}

// substituteArgs replaces the parameters names in line by the values
// repl, as mod_macro's substitute_macro_args: left to right, at each
// place the longest name found there; a value for a name starting with
// '@' is put in double quotes, with '"' and '\' escaped by a backslash.
// Like mod_macro, it goes on looking from as far after the place as the
// value is long, not its quoted form, so that a name in the end of a
// quoted value is replaced too.
func substituteArgs(line string, names, repl []string, used []bool) (string, string) {
	ptr := 0
	for range 1 << 20 {
		at, which := -1, -1
		for i, n := range names {
			j := strings.Index(line[ptr:], n)
			if j >= 0 && (which < 0 || j < at || j == at && len(n) > len(names[which])) {
				at, which = j, i
			}
		}
		if which < 0 {
			return line, ""
		}
		at += ptr
		name, r := names[which], repl[which]
		if name != r {
			sub := r
			if name[0] == '@' {
				var b strings.Builder
				b.WriteByte('"')
				for k := 0; k < len(r); k++ {
					if r[k] == '"' || r[k] == '\\' {
						b.WriteByte('\\')
					}
					b.WriteByte(r[k])
				}
				b.WriteByte('"')
				sub = b.String()
			}
			if len(line)+len(sub)-len(name) >= maxStringLen {
				return "", "cannot substitute, buffer size too small"
			}
			line = line[:at] + sub + line[at+len(name):]
		}
		ptr = at + len(r)
		if used != nil {
			used[which] = true
		}
	}
	return "", "cannot substitute, buffer size too small"
}
