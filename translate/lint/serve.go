package lint

import (
	"errors"
	"strings"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/convert"
	"github.com/orderly-proxy/orderly/translate/directive"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// serveRefusals loads the configuration as orderly serve does, with the
// same model (translate.Load, legacy.forward_unfaithful off), and reads
// the .htaccess files below its document roots as requests would: what
// it refuses, lint reports (ORD-14), with the same message.
//
// conv is the configuration as translate read it to write it out
// (convert.Convert, with the same options), nil where it could not: what
// serve refuses in it comes from its model rather than from a second
// reading, and its .htaccess files, those conv found, are read as serve
// reads them (ServeView).
func serveRefusals(files []string, opt Options, conv *convert.Conversion) apacheconf.ErrorList {
	var el apacheconf.ErrorList
	var cfg *translate.Config
	if conv != nil {
		el = conv.Model.ServeRefusals()
		cfg = conv.Model.ServeView()
	} else {
		var err error
		if cfg, err = translate.Load(files, loadOptions(opt)); err != nil {
			if !errors.As(err, &el) {
				return apacheconf.ErrorList{{Msg: err.Error()}}
			}
			return el
		}
	}
	e := walk.New(cfg, walk.OS, nil)
	maxDirs := opt.MaxDirs
	if maxDirs <= 0 {
		maxDirs = 100000
	}
	var ht apacheconf.ErrorList
	if conv != nil && conv.HtaccessAll {
		ht = e.CheckHtaccessFound(e.Roots(), conv.Htaccess)
	} else {
		ht, _ = e.CheckHtaccess(e.Roots(), maxDirs)
	}
	return append(el, ht...)
}

// loadOptions are the options lint reads a configuration with through
// translate's model, for orderly serve's refusals (serveRefusals) and
// for orderly translate's text (convert): opt's semantics, server root,
// document root, defines and modules.
func loadOptions(opt Options) translate.LoadOptions {
	sem := translate.Legacy22
	if opt.Semantics == string(translate.Compat24) {
		sem = translate.Compat24
	}
	defines := map[string]bool{}
	for _, d := range opt.Defines {
		defines[d] = true
	}
	docRoot := opt.DocumentRoot
	if docRoot == "" {
		docRoot = "/var/www" // only where the configuration sets none
	}
	return translate.LoadOptions{
		Options: translate.Options{Semantics: sem, ServerRoot: opt.ServerRoot, DocumentRoot: docRoot},
		Defines: defines,
		Modules: opt.Modules,
	}
}

// semantics is what orderly serve is to read a configuration given no
// Options.Semantics as: "2.4-compat" when it is written for 2.4 (a
// directive Apache 2.2 does not know, or a Require of a provider 2.2 does
// not have) and has nothing only 2.2 knows, "2.2" otherwise.
func (l *linter) semantics() string {
	only24 := false
	for _, n := range l.nodes {
		name := n.d.Name
		if n.d.IsSection() {
			name = "<" + name
		}
		in22, in24 := directive.Known(name, directive.V22), directive.Known(name, directive.V24)
		if in22 && !in24 {
			return string(translate.Legacy22) // whatever the rest holds
		}
		only24 = only24 || in24 && !in22
		if n.name == "require" && len(n.d.Args) > 0 {
			p := n.d.Args[0]
			if strings.EqualFold(p, "not") && len(n.d.Args) > 1 {
				p = n.d.Args[1]
			}
			switch strings.ToLower(p) {
			case "all", "ip", "host", "local", "env", "method", "expr", "forward-dns":
				only24 = true
			}
		}
	}
	if only24 {
		return string(translate.Compat24)
	}
	return string(translate.Legacy22)
}

// reportRefusals adds an ORD-14 finding for each refusal of serve's, on
// the directive it names where lint read one there.
func (l *linter) reportRefusals(errs apacheconf.ErrorList) {
	if len(errs) == 0 {
		return
	}
	// The directive at each line refused, the first read there: the
	// refusals name few lines of many, so the nodes are looked up by line
	// in a bit set first, and by position only on those lines.
	at := map[apacheconf.Pos]*dir{}
	var lines []uint64
	for _, e := range errs {
		p := e.Pos
		if p.File == "" || p.Line < 0 {
			continue // no node is there
		}
		p.Col = 0
		at[p] = nil
		for p.Line/64 >= len(lines) {
			lines = append(lines, 0)
		}
		lines[p.Line/64] |= 1 << (p.Line % 64)
	}
	for _, n := range l.nodes {
		p := n.d.Pos
		if p.Line < 0 || p.Line/64 >= len(lines) || lines[p.Line/64]&(1<<(p.Line%64)) == 0 {
			continue
		}
		p.Col = 0
		if d, ok := at[p]; ok && d == nil {
			at[p] = n.d
		}
	}
	seen := map[string]bool{}
	for _, e := range errs {
		key := e.Error()
		if seen[key] || e.Pos.File == "" {
			continue
		}
		seen[key] = true
		p := e.Pos
		p.Col = 0
		text := ""
		if d := at[p]; d != nil {
			text = written(d)
			p.Col = d.Pos.Col
		}
		if p.Col == 0 {
			p.Col = 1
		}
		fix := ""
		if strings.Contains(e.Pos.File, "/") && isAccessFile(e.Pos.File, l.access) {
			fix = "Fix the directive: until then orderly, as Apache, answers 500 for this directory and below."
		}
		l.report("ORD-14", p, text, e.Msg, fix)
	}
}

// isAccessFile reports whether path names an access file (.htaccess).
func isAccessFile(path string, names []string) bool {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if len(names) == 0 {
		return base == ".htaccess"
	}
	for _, n := range names {
		if base == n {
			return true
		}
	}
	return false
}
