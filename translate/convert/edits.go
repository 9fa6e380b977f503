package convert

import (
	"bytes"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/orderly-proxy/orderly/internal/swar"
	"github.com/orderly-proxy/orderly/translate"
)

// atEnd as an edit's from and to appends its text to the file.
const atEnd = 1 << 30

// applyEdits rewrites a file's text: the edits es made, the LoadModule
// line of mod_access_compat commented out unless keepCompat, and with
// rename the catalogue's renames and removals (renameLine) made in the
// same pass, whose number it returns. A configuration file's text
// (rename) gets room for the lines addModules may add to it.
func applyEdits(src []byte, es []edit, keepCompat, rename bool) ([]byte, int) {
	// The text after the last newline, even empty, is a line too.
	lines := bytes.Count(src, []byte("\n")) + 1
	if !slices.IsSortedFunc(es, byFrom) {
		slices.SortStableFunc(es, byFrom)
	}
	size := len(src)
	for _, e := range es {
		for _, t := range e.text {
			size += len(t) + 1
		}
		if keepCompat {
			for _, t := range e.withCompat {
				size += len(t) + 1
			}
		}
	}
	if rename {
		size += moduleRoom
	}
	// The source is looked at and copied, never kept: a string over it,
	// not a copy of it.
	text := unsafe.String(unsafe.SliceData(src), len(src))
	b := make([]byte, 0, size)
	// start is where line k begins (len(src) past the last line), found
	// from the line last asked for on: the edits ask in order.
	at, atLine := 0, 1
	start := func(k int) int {
		if k > lines {
			return len(src)
		}
		if k < atLine {
			at, atLine = 0, 1
		}
		for ; atLine < k; atLine++ {
			at += bytes.IndexByte(src[at:], '\n') + 1
		}
		return at
	}
	// Every line is written through line, unless nothing is to be done to
	// any: then the file is copied a stretch at a time.
	renamedLines := 0
	perLine := rename || !keepCompat
	line := func(l string) {
		if !keepCompat && loadsAccessCompat(l) {
			b = append(b, "# orderly DIR-10: mod_access_compat no longer needed: "...)
			b = append(b, l...)
			return
		}
		if !keepCompat {
			if rest, ok := logLevelWithoutCompat(l); ok {
				// A LogLevel for a module not loaded stops Apache.
				b = append(b, "# orderly DIR-10: mod_access_compat no longer loaded: "...)
				b = append(b, strings.TrimLeft(l, " \t")...)
				if !strings.HasSuffix(l, "\n") {
					b = append(b, '\n')
				}
				b = append(b, rest...)
				return
			}
		}
		if !rename {
			b = append(b, l...)
			return
		}
		var changed bool
		if b, changed = renameLine(b, l); changed {
			renamedLines++
		}
	}
	// asIs reports whether line writes l as it is, as it does a line
	// whose first word is none it looks at (most lines): those are copied
	// a stretch at a time.
	asIs := func(l string) bool {
		w, ok := firstWord(l)
		return ok && !renamed(w) && (keepCompat || len(w) != len("LogLevel") || !strings.EqualFold(w, "LogLevel"))
	}
	copyLines := func(text string) {
		if !perLine {
			b = append(b, text...)
			return
		}
		kept := 0 // text[kept:i] is lines written as they are, not yet copied
		for i := 0; i < len(text); {
			end := len(text)
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				end = i + j + 1
			}
			if l := text[i:end]; !asIs(l) {
				b = append(b, text[kept:i]...)
				line(l)
				kept = end
			}
			i = end
		}
		b = append(b, text[kept:]...)
	}
	writeText := func(t string) {
		// A line of one line, whose first word (as that of t and its
		// newline) says it is written as it is, is written so.
		if perLine && (strings.IndexByte(t, '\n') >= 0 || !asIs(t)) {
			copyLines(t + "\n")
			return
		}
		b = append(b, t...)
		b = append(b, '\n')
	}
	endLine := func() {
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
	}
	next := 1 // the first line not yet copied
	for _, e := range es {
		if e.from == atEnd {
			break
		}
		if e.from < next || e.to > lines {
			continue // overlaps an edit already made, or past the end
		}
		copyLines(text[start(next):start(e.from)])
		if e.from > lines {
			endLine() // inserted after a last line with no newline
		}
		for _, t := range e.text {
			writeText(t)
		}
		if keepCompat {
			for _, t := range e.withCompat {
				writeText(t)
			}
		}
		next = e.to + 1
	}
	if next <= lines {
		copyLines(text[start(next):])
	}
	for _, e := range es {
		if e.from != atEnd {
			continue
		}
		endLine()
		for _, t := range e.text {
			writeText(t)
		}
	}
	return b, renamedLines
}

// moduleRoom is the room a configuration file's text is given for the
// lines addModules may add (it copies the text where they do not fit).
const moduleRoom = 4096

// byFrom orders edits by their first line.
func byFrom(a, b edit) int { return a.from - b.from }

// logLevelWithoutCompat reports whether l is a LogLevel line with a level
// for mod_access_compat, and returns it without that word ("" where
// nothing else is left).
func logLevelWithoutCompat(l string) (string, bool) {
	if w, ok := firstWord(l); ok && !strings.EqualFold(w, "LogLevel") {
		return "", false
	}
	f := strings.Fields(l)
	if len(f) < 2 || !strings.EqualFold(f[0], "LogLevel") {
		return "", false
	}
	kept := []string{f[0]}
	for _, w := range f[1:] {
		mod, _, found := strings.Cut(w, ":")
		switch strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(mod), "mod_"), ".c") {
		case "access_compat", "access_compat_module":
			if found {
				continue
			}
		}
		kept = append(kept, w)
	}
	if len(kept) == len(f) {
		return "", false
	}
	if len(kept) == 1 {
		return "", true
	}
	indent := leadingBlanks(l)
	return indent + strings.Join(kept, " ") + "\n", true
}

// loadsAccessCompat reports whether the line l loads mod_access_compat.
func loadsAccessCompat(l string) bool {
	if w, ok := firstWord(l); ok && !strings.EqualFold(w, "LoadModule") {
		return false
	}
	var buf [4]string
	t := fields(l, &buf)
	return len(t) >= 2 && strings.EqualFold(t[0], "LoadModule") && t[1] == "access_compat_module"
}

// fields returns the first (up to four) words of the line l, as
// strings.Fields would, without allocating: they are kept in buf.
func fields(l string, buf *[4]string) []string {
	for i := 0; i < len(l); i++ {
		if l[i] >= utf8.RuneSelf {
			f := strings.Fields(l) // Unicode white space: the slow way
			return f[:copy(buf[:], f)]
		}
	}
	n := 0
	for i := 0; i < len(l) && n < len(buf); {
		for i < len(l) && asciiSpace(l[i]) {
			i++
		}
		j := i
		for j < len(l) && !asciiSpace(l[j]) {
			j++
		}
		if j > i {
			buf[n] = l[i:j]
			n++
		}
		i = j
	}
	return buf[:n]
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// anyFold reports whether one of texts contains substr (containsFold).
func anyFold(texts [][]byte, substr string) bool {
	return slices.ContainsFunc(texts, func(t []byte) bool { return containsFold(t, substr) })
}

// view is b as a string, not a copy: for looking at, while b stays as
// it is.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// containsFold reports whether s contains substr, a lower-case ASCII
// word, in any case. It looks at a whole file, often for a word that is
// not there: where the word has a byte other than a letter, at the
// places that byte stands; otherwise eight places at a time are tested
// for the word's first and last letters (the pair, apart, is much rarer
// than two letters side by side), and only where both are found is the
// rest compared.
func containsFold[T string | []byte](s T, substr string) bool {
	n, i := len(substr), 0
	// A byte of the word that is not a letter matches only itself: the
	// places it stands at are found a vector at a time (IndexByte).
	if k := strings.IndexFunc(substr, func(r rune) bool { return r < 'a' || r > 'z' }); k >= 0 {
		c := substr[k]
		for at := k; at < len(s); at++ {
			j := indexByte(s[at:], c)
			if j < 0 {
				return false
			}
			if at += j; foldAt(s, at-k, substr) {
				return true
			}
		}
		return false
	}
	// A byte b equal to c in any case has b|0x20 == c when c is a
	// lower-case letter or any byte with that bit set.
	if n >= 2 && substr[0]&0x20 != 0 && substr[n-1]&0x20 != 0 {
		c0, c1 := uint64(substr[0])*swar.Ones, uint64(substr[n-1])*swar.Ones
		for ; i+n-1+8 <= len(s); i += 8 {
			// The high bit of each of the eight places whose first
			// letter, and whose last, is the word's, in any case.
			x0 := swar.Load(s[i:i+8], 0) | 0x20*swar.Ones
			x1 := swar.Load(s[i+n-1:i+n-1+8], 0) | 0x20*swar.Ones
			for m := swar.Zero(x0^c0) & swar.Zero(x1^c1); m != 0; m &= m - 1 {
				if foldAt(s, i+bits.TrailingZeros64(m)/8, substr) {
					return true
				}
			}
		}
	}
	for ; i <= len(s)-n; i++ {
		if foldAt(s, i, substr) {
			return true
		}
	}
	return false
}

// indexByte is strings.IndexByte or bytes.IndexByte, as s is.
func indexByte[T string | []byte](s T, c byte) int {
	switch s := any(s).(type) {
	case string:
		return strings.IndexByte(s, c)
	case []byte:
		return bytes.IndexByte(s, c)
	}
	panic("unreachable")
}

// foldAt reports whether s holds substr at i, in any ASCII case.
func foldAt[T string | []byte](s T, i int, substr string) bool {
	if i+len(substr) > len(s) {
		return false
	}
	for j := range len(substr) {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != substr[j] {
			return false
		}
	}
	return true
}

// renames are the line-level changes of the upgrade catalogue that do not
// depend on a section: a directive renamed, or removed with a comment.
var renames = map[string]struct{ id, to, why string }{
	"maxclients":                  {"DIR-02", "MaxRequestWorkers", ""},
	"maxrequestsperchild":         {"DIR-01", "MaxConnectionsPerChild", ""},
	"namevirtualhost":             {"DIR-08", "", "NameVirtualHost has no effect in 2.4"},
	"defaulttype":                 {"DIR-03", "", "DefaultType has no effect in 2.4; use ForceType or AddType"},
	"acceptmutex":                 {"DIR-09", "", "replaced by Mutex"},
	"lockfile":                    {"DIR-09", "", "replaced by Mutex"},
	"sslmutex":                    {"DIR-09", "", "replaced by Mutex"},
	"rewritelock":                 {"DIR-09", "", "replaced by Mutex"},
	"rewritelog":                  {"BEH-09", "", "use LogLevel rewrite:traceN"},
	"rewriteloglevel":             {"BEH-09", "", "use LogLevel rewrite:traceN"},
	"authzuserauthoritative":      {"DIR-11", "", "removed in 2.4; RequireAll/RequireAny decide how Require lines combine"},
	"authzgroupfileauthoritative": {"DIR-11", "", "removed in 2.4; RequireAll/RequireAny decide how Require lines combine"},
	"authzdefaultauthoritative":   {"DIR-11", "", "removed in 2.4"},
	"authzdbmauthoritative":       {"DIR-11", "", "removed in 2.4"},
	"authzownerauthoritative":     {"DIR-11", "", "removed in 2.4"},
	"authzldapauthoritative":      {"DIR-11", "", "removed in 2.4"},
}

// goneModules are 2.2 modules that 2.4 renamed or dropped (BLD-02).
var goneModules = map[string]string{
	"authn_alias_module":   "authn_core_module mod_authn_core.so",
	"authz_default_module": "",
	"authn_default_module": "",
	"disk_cache_module":    "cache_disk_module mod_cache_disk.so",
	"mem_cache_module":     "",
}

// modulePath is the directory part of a LoadModule line's file.
func modulePath(file string) string {
	file = strings.Trim(file, `"`)
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[:i+1]
	}
	return ""
}

// renameLine appends the line l (with its newline) to b, renamed or
// removed if the catalogue says so, and reports whether it was.
func renameLine(b []byte, l string) ([]byte, bool) {
	// Most lines are none of those changed, as their first word says.
	if w, ok := firstWord(l); ok && !renamed(w) {
		return append(b, l...), false
	}
	var buf [4]string
	f := fields(l, &buf)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return append(b, l...), false
	}
	indent := leadingBlanks(l)
	// The name in lower case, in a buffer: looked up and compared, never
	// kept, so not allocated.
	var lb [32]byte
	lower := appendLower(lb[:0], f[0])
	if r, ok := renames[string(lower)]; ok {
		if r.to != "" {
			b = append(b, indent+"# orderly "+r.id+": "+f[0]+" renamed "+r.to+"\n"...)
			b = append(b, indent+r.to+strings.TrimPrefix(strings.TrimLeft(l, " \t"), f[0])...)
			return b, true
		}
		b = append(b, indent+"# orderly "+r.id+": "+r.why+": "+strings.TrimLeft(l, " \t")...)
		return b, true
	}
	if string(lower) == "keepalive" && len(f) == 2 && !strings.EqualFold(f[1], "on") && !strings.EqualFold(f[1], "off") {
		v := "On"
		if f[1] == "0" {
			v = "Off"
		}
		b = append(b, indent+"# orderly DIR-07: KeepAlive takes only On or Off (2.2 read "+f[1]+" as "+v+")\n"...)
		b = append(b, indent+"KeepAlive "+v+"\n"...)
		return b, true
	}
	if string(lower) == "loadmodule" && len(f) >= 2 {
		if to, ok := goneModules[f[1]]; ok {
			b = append(b, indent+"# orderly BLD-02: "+f[1]+" is not part of 2.4: "+strings.TrimLeft(l, " \t")...)
			if to != "" {
				if !strings.HasSuffix(l, "\n") {
					b = append(b, '\n') // the last line, with none at its end
				}
				id, file, _ := strings.Cut(to, " ")
				dir := ""
				if len(f) >= 3 {
					dir = modulePath(f[2])
				}
				b = append(b, indent+"LoadModule "+id+" "+dir+file+"\n"...)
			}
			return b, true
		}
		if translate.IsBuiltinModule(f[1]) {
			// Compiled into some 2.4 builds (Debian's): loading it there
			// stops the server; shared elsewhere (RHEL's).
			nl := ""
			if !strings.HasSuffix(l, "\n") {
				nl = "\n"
			}
			b = append(b, indent+"# orderly ORD-06: "+f[1]+" is built into some 2.4 servers, which refuse to load it again\n"...)
			b = append(b, indent+"<IfModule !"+f[1]+">\n"...)
			b = append(b, "    "+l+nl...)
			b = append(b, indent+"</IfModule>\n"...)
			return b, true
		}
	}
	return append(b, l...), false
}

// firstWord returns the first word of l, as fields would, when l's blanks
// before it and after it are ASCII: ok is false where fields must decide
// (a byte from 0x80, which may be Unicode white space).
func firstWord(l string) (w string, ok bool) {
	i := 0
	for i < len(l) && asciiSpace(l[i]) {
		i++
	}
	j := i
	for j < len(l) && !asciiSpace(l[j]) {
		if l[j] >= utf8.RuneSelf {
			return "", false
		}
		j++
	}
	return l[i:j], true
}

// renamed reports whether renameLine may change a line whose first word
// is w: a name of renames, KeepAlive or LoadModule, in any case.
func renamed(w string) bool {
	var lower [32]byte
	if len(w) > len(lower) || renamedLens&(1<<len(w)) == 0 {
		return false // no name is that long (TestRenamed)
	}
	l := appendLower(lower[:0], w)
	_, ok := renames[string(l)]
	return ok || string(l) == "keepalive" || string(l) == "loadmodule"
}

// renamedLens has bit n set when a name renameLine acts on is n long.
var renamedLens = func() uint64 {
	lens := uint64(1)<<len("keepalive") | 1<<len("loadmodule")
	for n := range renames {
		lens |= 1 << len(n)
	}
	return lens
}()

// appendLower appends s in lower case (ASCII letters only, as httpd
// compares directive names).
func appendLower(dst []byte, s string) []byte {
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// userOrGroup reports whether text has a User or Group line (Unix only in
// 2.2's core, mod_unixd's in 2.4): the name first on the line, after
// blanks, then blanks and a value.
func userOrGroup(text string) bool {
	for l := range strings.Lines(text) {
		l = strings.TrimLeft(l, " \t")
		var rest string
		switch {
		case len(l) > 4 && strings.EqualFold(l[:4], "user"):
			rest = l[4:]
		case len(l) > 5 && strings.EqualFold(l[:5], "group"):
			rest = l[5:]
		default:
			continue
		}
		if v := strings.TrimLeft(rest, " \t"); len(v) < len(rest) && v != "" && !strings.ContainsRune("\t\n\f\r ", rune(v[0])) {
			return true
		}
	}
	return false
}

// addModules returns text with the LoadModule lines 2.4 needs where a
// configuration that loads its modules lacks them: the core authorization
// and authentication modules (ERR-02, ERR-04) and an MPM (2.2 had one
// compiled in), and mod_access_compat where compat: lines left as they
// are still use it, which a 2.2 tree never loads (its Order/Allow/Deny
// were mod_authz_host's). They go after the last LoadModule line of text
// (ml, from loadsModules), with the path of the lines before them. all
// are the texts of every file, text among them. The lines are inserted
// in text's own buffer where it has room (applyEdits gives it some):
// text is not to be used afterwards, only what addModules returns.
func addModules(text []byte, ml moduleLines, have map[string]bool, all [][]byte, compat bool) []byte {
	if ml.end == 0 {
		return text
	}
	dir := ml.dir
	var add []string
	mpm := false
	for m := range have {
		if strings.HasPrefix(m, "mpm_") {
			mpm = true
		}
	}
	if !mpm {
		add = append(add, "# orderly: Apache 2.4 loads its MPM as a module (2.2's was compiled in)\n", "LoadModule mpm_prefork_module "+dir+"mod_mpm_prefork.so\n")
	}
	for _, m := range []struct {
		id, file, why string
		need          func() bool
	}{
		{"authz_core_module", "mod_authz_core.so", "ERR-02: needed by 2.4's Require and Auth* directives", nil},
		{"authz_host_module", "mod_authz_host.so", "AUTH-01: needed by 2.4's Require ip and Require host", nil},
		{"authn_core_module", "mod_authn_core.so", "ERR-04: needed by 2.4's Auth* directives", nil},
		{"access_compat_module", "mod_access_compat.so", "DIR-10: the Order/Allow/Deny/Satisfy lines left as they are need mod_access_compat", func() bool { return compat }},
		{"lbmethod_byrequests_module", "mod_lbmethod_byrequests.so", "ERR-03: 2.4's balancer methods are modules of their own", func() bool { return have["proxy_balancer_module"] }},
		{"slotmem_shm_module", "mod_slotmem_shm.so", "ERR-03: 2.4's mod_proxy_balancer needs a slotmem provider", func() bool { return have["proxy_balancer_module"] }},
		{"socache_shmcb_module", "mod_socache_shmcb.so", "ERR-03: 2.4's shmcb session cache is a module of its own", func() bool { return anyFold(all, "shmcb") }},
		{"filter_module", "mod_filter.so", "ERR-03: 2.4's AddOutputFilterByType is mod_filter's", func() bool { return anyFold(all, "addoutputfilterbytype") }},
	} {
		if !have[m.id] && (m.need == nil || m.need()) {
			add = append(add, "# orderly "+m.why+"\n", "LoadModule "+m.id+" "+dir+m.file+"\n")
		}
	}
	if !have["unixd_module"] && slices.ContainsFunc(all, func(t []byte) bool { return userOrGroup(view(t)) }) {
		// Built into Debian's Apache (where loading it again is an
		// error), a module of its own in a default build: load it where
		// it is not there yet.
		add = append(add, "# orderly ERR-01: 2.4's User and Group are mod_unixd's\n",
			"<IfModule !unixd_module>\n", "    LoadModule unixd_module "+dir+"mod_unixd.so\n", "</IfModule>\n")
	}
	if len(add) == 0 {
		return text
	}
	n := 0
	if text[ml.end-1] != '\n' {
		n++ // the last line of a file without a newline at its end
	}
	for _, a := range add {
		n += len(a)
	}
	var out []byte
	if cap(text) >= len(text)+n {
		out = text[:len(text)+n]
	} else {
		out = make([]byte, len(text)+n)
		copy(out, text[:ml.end])
	}
	copy(out[ml.end+n:], text[ml.end:])
	at := ml.end
	if text[ml.end-1] != '\n' {
		out[at] = '\n'
		at++
	}
	for _, a := range add {
		at += copy(out[at:], a)
	}
	return out
}

// moduleLines is where a text loads modules: end is the offset just past
// its last LoadModule line (0: it has none), and dir the directory part of
// the last such line that names one ("modules/" if none does).
type moduleLines struct {
	end int
	dir string
}

// loadsModules adds the modules text loads to have and reports where. It
// keeps no part of text, which addModules may write over.
func loadsModules(text []byte, have map[string]bool) moduleLines {
	ml := moduleLines{dir: "modules/"}
	var buf [4]string
	at := 0
	// The modules added go after the last LoadModule line, or after the
	// end of the <IfModule> section it is in.
	depth, inSection := 0, false
	for l := range strings.Lines(view(text)) {
		at += len(l)
		// Most lines are none of those below, as the first byte after
		// their blanks says: ASCII, and neither '<' nor 'L' in any case,
		// it starts their first word as firstWord and fields read it.
		first := 0
		for first < len(l) && asciiSpace(l[first]) {
			first++
		}
		if first == len(l) {
			continue
		}
		if c := l[first]; c < utf8.RuneSelf && c != '<' && c|0x20 != 'l' {
			continue
		}
		w, ok := firstWord(l)
		switch {
		case ok && len(w) >= len("<IfModule") && strings.EqualFold(w[:len("<IfModule")], "<IfModule"):
			depth++
			continue
		case ok && strings.EqualFold(w, "</IfModule>"):
			if depth > 0 {
				depth--
			}
			if depth == 0 && inSection {
				ml.end, inSection = at, false
			}
			continue
		case ok && !strings.EqualFold(w, "LoadModule"):
			continue
		}
		f := fields(l, &buf)
		if len(f) >= 3 && strings.EqualFold(f[0], "LoadModule") {
			if !have[f[1]] {
				have[strings.Clone(f[1])] = true
			}
			if depth == 0 {
				ml.end = at
			} else {
				inSection = true
			}
			if j := strings.LastIndexByte(f[2], '/'); j >= 0 {
				ml.dir = strings.Trim(f[2][:j+1], `"`)
			}
		}
	}
	ml.dir = strings.Clone(ml.dir)
	return ml
}
