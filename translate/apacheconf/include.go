package apacheconf

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Limits. The first two are httpd's AP_MAX_INCLUDE_DEPTH and
// AP_MAX_FNMATCH_DIR_DEPTH; the others keep a configuration that includes
// a file many times over (each file including the next twice, say) from
// running for ever.
const (
	maxIncludeDepth = 128
	maxDirDepth     = 128
	maxReads        = 10000    // files and directories
	maxBytes        = 64 << 20 // of files
)

// resolve returns path relative to the server root.
func (l *loader) resolve(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(l.root, path)
}

// include returns the directives of the files named by the Include or
// IncludeOptional d.
func (l *loader) include(d *Directive, f frame) []*Directive {
	if len(d.Args) != 1 || d.Args[0] == "" {
		if d.Is("Include") {
			l.errorf(d.Pos, d.Trail, "Include takes one argument, Name(s) of the config file(s) to be included; fails if the wildcard does not match at least one file")
		} else {
			l.errorf(d.Pos, d.Trail, "IncludeOptional takes one argument, Name or pattern of the config file(s) to be included; ignored if the file does not exist or the pattern does not match any files")
		}
		return nil
	}
	inc := &inclusion{l: l, at: d, optional: d.Is("IncludeOptional"), inSection: f.inSection}
	path := l.resolve(d.Args[0])
	if strings.HasSuffix(d.Args[0], "/") && !strings.HasSuffix(path, "/") {
		path += "/" // "dir*/" matches directories only
	}
	inc.run(path)
	return inc.out
}

// An inclusion is the reading of what one Include names (or of the top
// file, when at is nil).
type inclusion struct {
	l         *loader
	at        *Directive // the Include; nil for the top file
	optional  bool
	inSection bool
	depth     int  // directory nesting
	stop      bool // a fatal error; read no more
	out       []*Directive
}

func (c *inclusion) fail(msg string) {
	if c.at == nil {
		c.l.errorf(Pos{}, nil, msg)
	} else {
		c.l.errorf(c.at.Pos, c.at.Trail, msg)
	}
}

// run reads what path names.
func (c *inclusion) run(path string) {
	if !hasWildcard(path) {
		c.path(path)
		return
	}
	dir, rest := "", path
	if filepath.IsAbs(path) {
		dir, rest = string(filepath.Separator), path[1:]
	}
	c.match(dir, strings.Split(filepath.ToSlash(rest), "/"))
}

// match reads what the path components comps, some with wildcards, name
// below dir, as httpd's ap_dir_fnmatch.
func (c *inclusion) match(dir string, comps []string) {
	for len(comps) > 0 && comps[0] == "" {
		comps = comps[1:]
	}
	if len(comps) == 0 {
		c.path(dir)
		return
	}
	comp, rest := comps[0], comps[1:]
	if !hasWildcard(comp) {
		c.next(join(dir, comp), rest)
		return
	}
	l := c.l
	shown := dir
	if shown == "" {
		shown = "."
	}
	if !l.read() {
		return
	}
	fi, err := l.opt.Stat(shown)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		if c.optional && errors.Is(err, fs.ErrNotExist) {
			return
		}
		c.fail("Include/IncludeOptional: Could not open directory " + shown + ": " + errText(err))
		return
	}
	matches, err := l.opt.Glob(join(escapeMeta(dir), aprToGoPattern(comp)))
	if err != nil {
		c.fail("Include/IncludeOptional: bad wildcard '" + comp + "' in '" + shown + "'")
		return
	}
	// APR_FNM_PERIOD: a leading dot is matched only by a dot.
	dot := strings.HasPrefix(comp, ".") || strings.HasPrefix(comp, `\.`)
	var keep []string
	for _, m := range matches {
		if base := filepath.Base(m); strings.HasPrefix(base, ".") && !dot || base == "." || base == ".." {
			continue
		}
		if len(rest) > 0 {
			// A match inside the path must be a directory.
			if fi, err := l.opt.Stat(m); err != nil || !fi.IsDir() {
				continue
			}
		}
		keep = append(keep, m)
	}
	if len(keep) == 0 {
		if !c.optional {
			c.fail("Include/IncludeOptional: No matches for the wildcard '" + comp + "' in '" + shown + "', failing")
		}
		return
	}
	slices.Sort(keep)
	for _, m := range keep {
		if c.stop || l.abort {
			return
		}
		c.next(m, rest)
	}
}

// next goes on with path, the components rest below it being still to match.
func (c *inclusion) next(path string, rest []string) {
	if len(rest) == 0 {
		c.path(path)
	} else {
		c.match(path, rest)
	}
}

// path reads the file or directory path, as httpd's ap_dir_nofnmatch.
func (c *inclusion) path(path string) {
	l := c.l
	if c.stop || !l.read() {
		return
	}
	fi, err := l.opt.Stat(path)
	if err == nil && fi.IsDir() {
		c.dir(path)
		return
	}
	if c.optional && err != nil {
		return
	}
	c.file(path)
}

// dir reads every entry of the directory path, in lexical order.
func (c *inclusion) dir(path string) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDirDepth {
		c.fail("Include/IncludeOptional: Directory '" + path + "' exceeds the maximum include directory nesting level of " + strconv.Itoa(maxDirDepth) + ". You have probably a recursion somewhere.")
		c.stop = true
		return
	}
	ents, err := c.l.opt.ReadDir(path)
	if err != nil {
		c.fail("Include/IncludeOptional: Could not open directory " + path + ": " + errText(err))
		return
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if n := e.Name(); n != "." && n != ".." {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if c.stop || c.l.abort {
			return
		}
		c.path(join(path, n))
	}
}

// file reads, parses and expands the configuration file path.
func (c *inclusion) file(path string) {
	l := c.l
	var trail []Pos
	if c.at != nil {
		trail = append(slices.Clip(c.at.Trail), c.at.Pos)
		trail = slices.Clip(trail)
	}
	key := fileKey(path)
	if i := slices.Index(l.files, key); i >= 0 {
		chain := append(slices.Clone(l.names[i:]), path)
		c.fail("Include cycle: " + strings.Join(chain, " -> "))
		return
	}
	if len(trail) > maxIncludeDepth {
		c.fail("Exceeded maximum include depth of " + strconv.Itoa(maxIncludeDepth) + ", There appears to be a recursion.")
		c.stop = true
		return
	}
	src, err := l.opt.ReadFile(path)
	if err != nil {
		c.fail("Could not open configuration file " + path + ": " + errText(err))
		return
	}
	if l.bytes += len(src); l.bytes > maxBytes {
		l.abort = true
		l.errorf(Pos{}, nil, "too much configuration to read (more than "+strconv.Itoa(maxBytes>>20)+" MiB); is there an Include loop?")
		return
	}
	l.files = append(l.files, key)
	l.names = append(l.names, path)
	// The bytes are the loader's (Options.ReadFile): parsed in place.
	text := unsafe.String(unsafe.SliceData(src), len(src))
	c.out = append(c.out, l.readText(text, frame{trail: trail, inSection: c.inSection, file: path})...)
	l.files = l.files[:len(l.files)-1]
	l.names = l.names[:len(l.names)-1]
}

// fileKey returns the name by which include cycles are told.
func fileKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// join joins a directory and a name as httpd's ap_make_full_path, without
// cleaning.
func join(dir, name string) string {
	switch {
	case dir == "":
		return name
	case strings.HasSuffix(dir, string(filepath.Separator)):
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// hasWildcard reports whether s has a wildcard, as apr_fnmatch_test: '*',
// '?', or '[' with a later ']'. A backslash escapes the next character.
func hasWildcard(s string) bool {
	open := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?':
			return true
		case '\\':
			i++
		case '[':
			open = true
		case ']':
			if open {
				return true
			}
		}
	}
	return false
}

// escapeMeta escapes the characters that filepath.Match treats specially.
func escapeMeta(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// aprToGoPattern rewrites apr_fnmatch's negated class "[!...]" into
// filepath.Match's "[^...]".
func aprToGoPattern(p string) string {
	b := []byte(p)
	inClass := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\':
			i++
		case !inClass && b[i] == '[':
			inClass = true
			if i+1 < len(b) && b[i+1] == '!' {
				b[i+1] = '^'
				i++
			}
		case inClass && b[i] == ']':
			inClass = false
		}
	}
	return string(b)
}

// errText returns the text of a file system error the way httpd prints it
// (strerror): "No such file or directory".
func errText(err error) string {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	}
	s := err.Error()
	if errno := syscall.Errno(0); errors.As(err, &errno) && s != "" && 'a' <= s[0] && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
