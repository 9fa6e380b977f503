package policy

import (
	"errors"
	"strings"
)

// Template is a Require argument line that 2.4 reads as a string
// expression (ap_expr) because it holds "%{env:NAME}": evaluated per
// request, then split into words. Only environment variables are
// supported; anything else in %{...} is refused when the configuration
// loads.
type Template struct {
	parts []tmplPart
}

type tmplPart struct {
	lit string
	env string // set for %{env:NAME}
}

// ErrUnsupportedExpr is returned for %{...} forms orderly does not evaluate.
var ErrUnsupportedExpr = errors.New("only %{env:NAME} is evaluated by orderly in Require expressions")

// ParseTemplate parses an expression string with %{env:NAME} references,
// or returns nil when s has none.
func ParseTemplate(s string) (*Template, error) {
	if !strings.Contains(s, "%{") {
		return nil, nil
	}
	t := &Template{}
	for s != "" {
		i := strings.Index(s, "%{")
		if i < 0 {
			t.parts = append(t.parts, tmplPart{lit: s})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, tmplPart{lit: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, errors.New("unterminated %{ in expression")
		}
		v := s[i+2 : i+j]
		name, ok := strings.CutPrefix(v, "env:")
		if !ok || name == "" {
			return nil, ErrUnsupportedExpr
		}
		t.parts = append(t.parts, tmplPart{env: name})
		s = s[i+j+1:]
	}
	return t, nil
}

// Words evaluates the template against the request's environment and
// splits the result into words.
func (t *Template) Words(env *Env) []string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.env != "" {
			v, _ := env.Get(p.env)
			b.WriteString(v)
			continue
		}
		b.WriteString(p.lit)
	}
	return strings.Fields(b.String())
}
