package translate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// setEnvIf adds a SetEnvIf-family line to list (add_setenvif_core).
func (b *builder) setEnvIf(d *apacheconf.Directive, scope []string, list []*EnvRule) []*EnvRule {
	name := d.LowerName()
	icase := strings.HasSuffix(name, "nocase")
	args := d.Args
	attr := "User-Agent"
	if strings.HasPrefix(name, "setenvif") {
		if len(args) < 1 {
			b.errorf(d, "Missing header-field name for %s", d.Name)
			return list
		}
		attr, args = args[0], args[1:]
	}
	if len(args) < 1 || args[0] == "" {
		b.errorf(d, "Missing regular expression for %s", d.Name)
		return list
	}
	pattern, features := args[0], args[1:]
	if len(features) == 0 {
		b.errorf(d, "Missing envariable expression for %s", d.Name)
		return list
	}
	r := b.rule(d, scope)
	var e *EnvRule
	if n := len(list); n > 0 {
		last := list[n-1]
		if strings.EqualFold(last.Name, attr) && last.ICase == icase && last.Pattern == pattern {
			e = last
		}
	}
	if e == nil {
		e = &EnvRule{Name: attr, Pattern: pattern, ICase: icase, Rule: r}
		for _, o := range list {
			if equalFoldASCII(o.Name, attr) {
				e.first = o.nameKey()
				break
			}
		}
		if s, ok := nonRegexPattern(pattern); ok {
			e.Substr = s
		} else {
			e.Re = b.compileRegex(d, pattern, b.regexOpts(icase), setEnvIfNames[name]+" regex could not be compiled.")
			if e.Re == nil {
				return list
			}
		}
		switch strings.ToLower(attr) {
		case "remote_addr":
			e.Attr = AttrRemoteAddr
		case "remote_host":
			e.Attr = AttrRemoteHost
		case "request_uri":
			e.Attr = AttrRequestURI
		case "request_method":
			e.Attr = AttrRequestMethod
		case "request_protocol":
			e.Attr = AttrRequestProtocol
		case "server_addr":
			e.Attr = AttrServerAddr
		default:
			e.Attr = AttrHeader
			if !headerNameRE.MatchString(attr) {
				re := b.compileRegex(d, attr, b.regexOpts(icase), setEnvIfNames[name]+"Header name regex could not be compiled.")
				if re == nil {
					return list
				}
				e.Attr, e.NameRe, e.NameFold = AttrHeaderRegex, re, re
				if !re.Options().ICase {
					// Where the names' spelling is lost (Go's header
					// map, explain), a match without regard to case
					// tells whether a name can match at all.
					e.NameFold, _ = regex.Compile(attr, b.regexOpts(true))
				}
			}
		}
		list = append(list, e)
	}
	for _, f := range features {
		v, val, hasEq := strings.Cut(f, "=")
		var ft Feature
		switch {
		case hasEq && val != "":
			ft = Feature{Name: v, Value: val, Unset: strings.HasPrefix(val, "!")}
		case strings.HasPrefix(v, "!"):
			ft = Feature{Name: v[1:], Unset: true}
		default:
			ft = Feature{Name: v, Value: "1"}
		}
		replaced := false
		for i := range e.Features {
			if strings.EqualFold(e.Features[i].Name, ft.Name) {
				e.Features[i], replaced = ft, true
				break
			}
		}
		if !replaced {
			e.Features = append(e.Features, ft)
		}
	}
	return list
}

// exprString evaluates a constant ap_expr string expression, as AuthName
// is in 2.4 (server/util_expr_scan.l, string state): backslash escapes
// (octal, \n \r \t \b \f, any other character as itself) are applied.
// Variables (%{...}) and regex back-references need a request, which
// orderly does not evaluate: they are refused.
func exprString(s string) (string, error) {
	if !strings.ContainsAny(s, `%$\`) {
		return s, nil // every byte stands for itself
	}
	var b strings.Builder
	b.Grow(len(s)) // an escape is longer than its byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+1 < len(s) && s[i+1] == '{':
			return "", fmt.Errorf("variables in the expression cannot be evaluated by orderly")
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			return "", fmt.Errorf("regex back-references in the expression cannot be evaluated by orderly")
		case c == '\\' && i+1 < len(s):
			i++
			e := s[i]
			switch {
			case e >= '0' && e <= '9':
				// flex takes the longer of \\[0-7]{1,3} and \\[0-9]+; the
				// second is an error.
				octal, digits := 0, 0
				for i+octal < len(s) && octal < 3 && s[i+octal] >= '0' && s[i+octal] <= '7' {
					octal++
				}
				for i+digits < len(s) && s[i+digits] >= '0' && s[i+digits] <= '9' {
					digits++
				}
				if digits > octal {
					return "", fmt.Errorf("Bad escape sequence")
				}
				v, _ := strconv.ParseUint(s[i:i+octal], 8, 16)
				if v > 0xff {
					return "", fmt.Errorf("Escape sequence out of bound")
				}
				b.WriteByte(byte(v))
				i += octal - 1
			case e == 'n':
				b.WriteByte('\n')
			case e == 'r':
				b.WriteByte('\r')
			case e == 't':
				b.WriteByte('\t')
			case e == 'b':
				b.WriteByte('\b')
			case e == 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
