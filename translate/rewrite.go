package translate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
	"github.com/orderly-proxy/orderly/translate/regex"
	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// rewriteValue is mod_rewrite's own checks of its directives' values
// (translate/rewrite): Apache's message for a RewriteRule, RewriteCond,
// RewriteBase, RewriteMap or RewriteOptions it refuses, "" otherwise. A
// pattern PCRE takes that orderly cannot evaluate is not refused here.
func (b *builder) rewriteValue(info *directive.Info, d *apacheconf.Directive, where directive.Context) string {
	env := b.rewriteEnv()
	var err error
	switch info.Name {
	case "RewriteOptions":
		return rewriteOptions(d.Args, b.tableVersion())
	case "RewriteRule":
		var r *rewrite.Rule
		r, err = rewrite.ParseRule(d.Raw, env)
		b.parsed(rewriteParsed{d: d, rule: r, err: err})
	case "RewriteCond":
		var c *rewrite.Cond
		c, err = rewrite.ParseCond(d.Raw, env)
		b.parsed(rewriteParsed{d: d, cond: c, err: err})
	case "RewriteBase":
		if len(d.Args) == 1 {
			return rewrite.CheckBase(d.Args[0], where != directive.Server)
		}
	case "RewriteMap":
		return b.rewriteMap(d)
	}
	var e *rewrite.Error
	if errors.As(err, &e) {
		var re *regex.Error
		if errors.As(e.Regex, &re) && re.Unsupported {
			return ""
		}
		return e.Msg
	}
	return ""
}

// rewriteParsed is the RewriteRule or RewriteCond rewriteValue parsed
// last, which rewriteLine takes rather than parse (and compile) it again.
type rewriteParsed struct {
	d    *apacheconf.Directive
	rule *rewrite.Rule
	cond *rewrite.Cond
	err  error
}

// parsed keeps p as the line rewriteValue parsed last.
func (b *builder) parsed(p rewriteParsed) {
	if b.rwParsed == nil {
		b.rwParsed = new(rewriteParsed)
	}
	*b.rwParsed = p
}

// parsedRewrite is d's RewriteRule or RewriteCond: as rewriteValue parsed
// it, or parsed now where it did not.
func (b *builder) parsedRewrite(d *apacheconf.Directive) (*rewrite.Rule, *rewrite.Cond, error) {
	if p := b.rwParsed; p != nil && p.d == d {
		r, c, err := p.rule, p.cond, p.err
		*p = rewriteParsed{}
		return r, c, err
	}
	if d.LowerName() == "rewritecond" {
		c, err := rewrite.ParseCond(d.Raw, b.rewriteEnv())
		return nil, c, err
	}
	r, err := rewrite.ParseRule(d.Raw, b.rewriteEnv())
	return r, nil, err
}

// rewriteMap is cmd_rewritemap's check of a map's source: a txt:, rnd:
// or plain file and a prg: program must exist (relative to ServerRoot),
// an int: map be one mod_rewrite has. dbm: and dbd: are refused later,
// as orderly does not read them.
func (b *builder) rewriteMap(d *apacheconf.Directive) string {
	if len(d.Args) < 2 {
		return ""
	}
	name, spec := d.Args[0], d.Args[1]
	lower := strings.ToLower(spec)
	var file string
	switch {
	case strings.HasPrefix(lower, "txt:") || strings.HasPrefix(lower, "rnd:"):
		file = spec[4:]
	case strings.HasPrefix(lower, "int:"):
		if !rewrite.InternalMaps[spec[4:]] {
			return "RewriteMap: internal map not found:" + spec[4:]
		}
		return ""
	case strings.HasPrefix(lower, "prg:"):
		file = strings.Fields(spec[4:] + " ")[0]
	case strings.HasPrefix(lower, "dbm"), strings.HasPrefix(lower, "dbd:"), strings.HasPrefix(lower, "fastdbd:"):
		return ""
	default:
		file = spec
	}
	if !filepath.IsAbs(file) && b.serverRoot != "" {
		file = filepath.Join(b.serverRoot, file)
	}
	if _, err := os.Stat(file); err != nil {
		return "RewriteMap: file for map " + name + " not found:" + file
	}
	return ""
}
