package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// rule makes the Rule of a directive. Its ID hashes the relative file, the
// enclosing sections, the normalised directive and its ordinal among
// identical siblings (design.md, "Rule IDs").
func (b *builder) rule(d *apacheconf.Directive, scope []string) *policy.Rule {
	if b.noIDs() {
		return renderRule
	}
	r := &policy.Rule{File: b.relFile(d.Pos.File), Line: d.Pos.Line, Text: d.Redacted()}
	if b.apart {
		b.pending = append(b.pending, pendingID{r: r, key: string(b.ruleKey(d, scope))})
	} else {
		r.ID = b.ruleID(d, scope, true)
	}
	b.rules = append(b.rules, r)
	return r
}

// ruleID is the ID of the directive's rule; take consumes its ordinal, so
// that the next identical sibling gets the next one.
func (b *builder) ruleID(d *apacheconf.Directive, scope []string, take bool) string {
	key := b.ruleKey(d, scope)
	n := b.ordinals[string(key)]
	if take {
		b.ordinals[string(key)] = n + 1
	}
	return ruleHash(key, n)
}

// ruleHash is the ID of the n-th rule with key (design.md, "Rule IDs"). It
// may append to key's array.
func ruleHash(key []byte, n int) string {
	key = append(key, 0)
	key = strconv.AppendInt(key, int64(n), 10)
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:6])
}

// ruleKey is a rule's key, in a buffer reused by the next call: its file,
// scope and normalised directive, NUL-separated.
func (b *builder) ruleKey(d *apacheconf.Directive, scope []string) []byte {
	key := append(b.idBuf[:0], b.relFile(d.Pos.File)...)
	key = append(key, 0)
	for i, s := range scope {
		if i > 0 {
			key = append(key, 0)
		}
		key = append(key, s...)
	}
	key = append(key, 0)
	key = append(key, d.LowerName()...)
	key = append(key, ' ')
	for i, a := range d.Args {
		if i > 0 {
			key = append(key, ' ')
		}
		key = append(key, a...)
	}
	b.idBuf = key
	return key
}

// demotable are the directives Options.Omit can take out of a policy:
// access lines and settings (IsSectionAccess), whose absence is what
// deleting the line means, and RewriteRule lines (with their RewriteCond
// lines).
var demotable = func() map[string]bool {
	m := map[string]bool{"rewriterule": true} // with its RewriteCond lines (rewriteLine)
	for k := range sectionAccess {
		m[k] = true
	}
	return m
}()

// omitted reports whether d is a rule Options.Omit takes out; its ID is
// then used up, so that the IDs of the rules after it do not move.
func (b *builder) omitted(d *apacheconf.Directive, name string, scope []string) bool {
	if len(b.opt.Omit) == 0 || !demotable[name] || !b.opt.Omit[b.ruleID(d, scope, false)] {
		return false
	}
	b.ruleID(d, scope, true)
	return true
}

// namedRule is rule, nil for a model only written out.
func (b *builder) namedRule(d *apacheconf.Directive, scope []string) *policy.Rule {
	if r := b.rule(d, scope); r != renderRule {
		return r
	}
	return nil
}

// own gives s the rules made since b.rules[first] that no section inside
// it took (a nested section's are its own).
func (b *builder) own(s *Section, first int) {
	for _, r := range b.rules[first:] {
		if !b.owned[r] {
			if b.owned == nil {
				b.owned = map[*policy.Rule]bool{}
			}
			b.owned[r] = true
			s.Lines = append(s.Lines, r)
		}
	}
}

// defaultRule makes the synthetic rule of a scope, which counts the
// decisions no directive made there. Its ID hashes the scope the way a
// directive's does, with "(default)" for the directive.
func (b *builder) defaultRule(d *apacheconf.Directive, scope ...string) *policy.Rule {
	if b.noIDs() {
		return renderRule
	}
	file, line, text := "", 0, "(default) server"
	if d != nil {
		file, line = b.relFile(d.Pos.File), d.Pos.Line
		text = "(default) <" + d.Name + " " + d.Raw + ">"
		if d.Raw == "" {
			text = "(default) <" + d.Name + " " + strings.Join(d.Args, " ") + ">"
		}
	}
	r := &policy.Rule{File: file, Line: line, Text: text, Default: true}
	b.defaults = append(b.defaults, r)
	key := file + "\x00" + strings.Join(scope, "\x00") + "\x00(default)"
	if b.apart {
		b.pending = append(b.pending, pendingID{r: r, key: key})
	} else {
		n := b.ordinals[key]
		b.ordinals[key] = n + 1
		r.ID = ruleHash(append(b.idBuf[:0], key...), n)
	}
	return r
}

// noIDs reports whether rules go without IDs: in a model only written out
// (Options.RenderOnly), where no rule is counted or omitted. Its lines
// then share renderRule, and Config.Rules is empty.
func (b *builder) noIDs() bool { return b.opt.RenderOnly && len(b.opt.Omit) == 0 }

// renderRule is the Rule of every line of a model only written out: one
// that is never counted, and never changed.
var renderRule = &policy.Rule{Text: "(written out)"}
