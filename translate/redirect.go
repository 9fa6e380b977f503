package translate

import (
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// mod_alias's Redirect, RedirectMatch, RedirectTemp and RedirectPermanent
// (modules/mappers/mod_alias.c add_redirect_internal), RedirectRelative,
// UseCanonicalName as it bears on the URLs of redirects, and ErrorDocument
// with a full URL (server/core.c set_error_document), read as Apache
// reads them. The walk (translate/walk/redirect.go) answers them at
// Apache's phases: translate_name, fixups, ap_die.

// DirRedirects are what one section sets of mod_alias's per-directory
// configuration and of core's ErrorDocument and UseCanonicalName. Nil in
// DirConf is a section that sets none of it.
type DirRedirects struct {
	// ErrorDocs are the section's ErrorDocument lines: a later one for a
	// status replaces what an earlier section set for it.
	ErrorDocs []ErrorDoc
	// Redirects are mod_alias's per-directory Redirect and RedirectMatch
	// lines (fixups, after access control). Merged, a section's come
	// before those it inherits.
	Redirects []*Redirect
	// Expr is 2.4's one-argument form in a directory context ("Redirect
	// [status] URL", or a status alone): a redirect for every request of
	// the section, tried at translate_name for <Location> sections and at
	// fixups for every section. Nil inherits.
	Expr *Redirect
	// Relative is RedirectRelative (2.4): -1 unset, 0 Off, 1 On.
	Relative int8
	// Canonical is UseCanonicalName: 0 unset, 1 On, 2 Off (DNS is refused
	// at load).
	Canonical int8
}

// ErrorDoc is one ErrorDocument line: the status and, where the document
// is a URL (ap_is_url), the URL Apache redirects to (302) instead of
// answering the error. URL is empty for a local document, a message, or
// "default": they change the body, not the status.
type ErrorDoc struct {
	Status int
	URL    string
}

// Redirect is one Redirect, RedirectMatch, RedirectTemp or
// RedirectPermanent line.
type Redirect struct {
	Status int
	// Path is the URL-path a Redirect matches, on whole segments, with any
	// run of slashes matching any other (alias_matches); Regex is
	// RedirectMatch's, over the decoded URI.
	Path  string
	Regex *regex.Regexp
	// URL is the target: the prefix the rest of the path is appended to,
	// a template with $N for RedirectMatch, or the whole target of the
	// one-argument form; empty for a status that is not a redirect (410,
	// 404, ...).
	URL  string
	Rule *policy.Rule
}

// IsRedirect reports whether a status is a redirect (ap_is_HTTP_REDIRECT).
func IsRedirect(status int) bool { return status >= 300 && status <= 399 }

// MergeDirRedirects merges what a section sets over what it inherits, as
// merge_alias_dir_config and merge_core_dir_configs do. Either may be nil.
func MergeDirRedirects(base, add *DirRedirects) *DirRedirects {
	if add == nil {
		return base
	}
	if base == nil {
		return add
	}
	c := *base
	if len(add.ErrorDocs) > 0 {
		c.ErrorDocs = append(append([]ErrorDoc(nil), base.ErrorDocs...), add.ErrorDocs...)
	}
	if len(add.Redirects) > 0 {
		c.Redirects = append(append([]*Redirect(nil), add.Redirects...), base.Redirects...)
	}
	if add.Expr != nil {
		c.Expr = add.Expr
	}
	if add.Relative >= 0 {
		c.Relative = add.Relative
	}
	if add.Canonical != 0 {
		c.Canonical = add.Canonical
	}
	return &c
}

// ErrorURL returns the URL an ErrorDocument in l sends status to, "" when
// Apache answers the status itself.
func (l *DirRedirects) ErrorURL(status int) string {
	if l == nil {
		return ""
	}
	for i := len(l.ErrorDocs) - 1; i >= 0; i-- {
		if l.ErrorDocs[i].Status == status {
			return l.ErrorDocs[i].URL
		}
	}
	return ""
}

func (b *builder) dirRedirects(c *DirConf) *DirRedirects {
	if c.Redirects == nil {
		c.Redirects = &DirRedirects{Relative: -1}
	}
	return c.Redirects
}

// redirects reads one of the directives of this file: in a section (ctx
// set) or at the top level of a server (ctx nil).
func (b *builder) redirects(d *apacheconf.Directive, ctx *dirCtx) {
	conf, scope := b.cfg.Defaults, b.scope
	if ctx != nil {
		conf, scope = ctx.conf, ctx.scope
	}
	one := func(what string) (string, bool) {
		if len(d.Args) != 1 {
			b.errorf(d, "%s takes one argument, %s", d.Name, what)
			return "", false
		}
		return d.Args[0], true
	}
	switch d.LowerName() {
	case "redirect", "redirectmatch", "redirecttemp", "redirectpermanent":
		b.redirect(d, ctx, conf, scope)
	case "redirectrelative":
		arg, ok := one("Set to ON to allow relative redirect targets to be issued as-is")
		if !ok {
			return
		}
		switch strings.ToLower(arg) {
		case "on":
			b.dirRedirects(conf).Relative = 1
		case "off":
			b.dirRedirects(conf).Relative = 0
		default:
			b.errorf(d, "RedirectRelative must be On or Off")
		}
	case "usecanonicalname":
		arg, ok := one("How to work out the ServerName : Port when constructing URLs")
		if !ok {
			return
		}
		switch strings.ToLower(arg) {
		case "on":
			b.dirRedirects(conf).Canonical = 1
		case "off":
			b.dirRedirects(conf).Canonical = 2
		case "dns":
			b.notFaithful(d, "UseCanonicalName DNS builds redirect URLs from a reverse lookup of the legacy server's own address, which orderly cannot make")
		default:
			b.errorf(d, "parameter must be 'on', 'off', or 'dns'")
		}
	case "errordocument":
		b.errorDocument(d, conf)
	}
}

// redirect is add_redirect_internal, for the four directives: in a
// directory context (an .htaccess file included) a per-directory line,
// at the top level of a server a server-level one.
func (b *builder) redirect(d *apacheconf.Directive, ctx *dirCtx, conf *DirConf, scope []string) {
	name := d.LowerName()
	v22 := b.cfg.Semantics == Legacy22
	args := d.Args
	status := 302
	switch name {
	case "redirectpermanent", "redirecttemp":
		if len(args) != 2 {
			b.errorf(d, "%s takes two arguments, a document to be redirected, then the destination URL", d.Name)
			return
		}
		if name == "redirectpermanent" {
			status = 301
		}
	case "redirectmatch":
		if len(args) < 2 || len(args) > 3 {
			b.errorf(d, "RedirectMatch takes two or three arguments, an optional status, then a regular expression and destination URL")
			return
		}
	default:
		if v22 && (len(args) < 2 || len(args) > 3) {
			b.errorf(d, "Redirect takes two or three arguments, an optional status, then document to be redirected and destination URL")
			return
		}
		if len(args) < 1 || len(args) > 3 {
			b.errorf(d, "Redirect takes one, two or three arguments, an optional status, then document to be redirected and destination URL")
			return
		}
	}
	arg1 := args[0]
	var arg2, arg3 string
	n := len(args)
	if n > 1 {
		arg2 = args[1]
	}
	if n > 2 {
		arg3 = args[2]
	}
	grok := 1
	switch l := strings.ToLower(arg1); {
	case l == "permanent":
		status = 301
	case l == "temp":
		status = 302
	case l == "seeother":
		status = 303
	case l == "gone":
		status = 410
		if !v22 {
			grok = -1
		}
	case arg1 != "" && arg1[0] >= '0' && arg1[0] <= '9':
		status = atoi(arg1)
		if !v22 && !IsRedirect(status) {
			grok = -1
		}
	default:
		grok = 0
	}
	if n == 3 && grok == 0 {
		b.errorf(d, "Redirect: invalid first argument (of three)")
		return
	}
	r := &Redirect{Status: status}
	inDir := ctx != nil
	if inDir && !v22 && (grok > 0 && n == 2 || grok == 0 && n == 1 || grok < 0 && n == 1) {
		// 2.4's expression form: the section itself redirects.
		if grok >= 0 {
			url := arg1
			if grok > 0 {
				url = arg2
			}
			if strings.Contains(url, "%{") || strings.ContainsAny(url, "$\\") {
				b.notFaithful(d, "a redirect target with ap_expr variables or escapes, which orderly does not evaluate")
				return
			}
			r.URL = url
		}
		if !b.sane(d, r) {
			return
		}
		r.Rule = b.rule(d, scope)
		b.dirRedirects(conf).Expr = r
		return
	}
	fake, url := arg2, arg3
	if n < 3 && grok == 0 {
		fake, url = arg1, arg2
	}
	isRegex := name == "redirectmatch"
	if isRegex {
		// ap_pregcomp with AP_REG_EXTENDED, under the defaults in force.
		if r.Regex = b.compileRegex(d, fake, b.regexOpts(false), msgAliasRegex); r.Regex == nil {
			return
		}
	} else {
		r.Path = fake
	}
	if IsRedirect(status) {
		if url == "" {
			b.errorf(d, "URL to redirect to is missing")
			return
		}
		if !isRegex && !isURL(url) && url[0] != '/' {
			b.errorf(d, "Redirect to non-URL")
			return
		}
	} else if url != "" {
		b.errorf(d, "Redirect URL not valid for this status")
		return
	}
	if fake == "" {
		// 2.4 keeps "Redirect gone" at the top level of a server with no
		// URL-path, and fails on the first request it tries.
		b.notFaithful(d, "a server-level Redirect with a status and no URL-path")
		return
	}
	r.URL = url
	if !b.sane(d, r) {
		return
	}
	r.Rule = b.rule(d, scope)
	if inDir {
		l := b.dirRedirects(conf)
		l.Redirects = append(l.Redirects, r)
		return
	}
	b.cfg.Redirects = append(b.cfg.Redirects, r)
}

// sane refuses the statuses orderly does not answer as Apache would:
// Apache takes any number, but below 300 ap_die does not make it a
// response.
func (b *builder) sane(d *apacheconf.Directive, r *Redirect) bool {
	if r.Status < 300 || r.Status > 599 {
		b.notFaithful(d, "a redirect status outside 300-599, which Apache does not answer as given")
		return false
	}
	return true
}

// errorDocument is set_error_document: what orderly needs of it is the
// URL form, which turns the error into a 302 (ap_die); a full URL for 401
// is ignored with a notice (AH00113), as Apache ignores it.
func (b *builder) errorDocument(d *apacheconf.Directive, conf *DirConf) {
	if len(d.Args) != 2 {
		b.errorf(d, "ErrorDocument takes two arguments, Change responses for HTTP errors")
		return
	}
	code := atoi(d.Args[0])
	if !knownStatus(code, b.cfg.Semantics == Legacy22) {
		b.errorf(d, "Unsupported HTTP response code %s", d.Args[0])
		return
	}
	msg := d.Args[1]
	url := ""
	if !strings.Contains(msg, " ") && msg != "" && msg[0] != '/' && isURL(msg) {
		if code == 401 {
			return // AH00113: cannot use a full URL in a 401 ErrorDocument directive --- ignoring!
		}
		if b.cfg.Semantics != Legacy22 && strings.Contains(msg, "%{") {
			b.notFaithful(d, "an ErrorDocument URL with ap_expr variables, which orderly does not evaluate")
			return
		}
		url = msg
	}
	l := b.dirRedirects(conf)
	l.ErrorDocs = append(l.ErrorDocs, ErrorDoc{Status: code, URL: url})
}

// knownStatus reports whether Apache has an ErrorDocument slot for a
// status (ap_index_of_response finds it in its status_lines).
func knownStatus(s int, v22 bool) bool {
	list := statuses24
	if v22 {
		list = statuses22
	}
	return strings.Contains(list, " "+strconv.Itoa(s)+" ")
}

// The status lines of modules/http/http_protocol.c, 2.4.x and 2.2.34.
const (
	statuses24 = " 100 101 102 200 201 202 203 204 205 206 207 208 226 300 301 302 303 304 305 307 308 400 401 402 403 404 405 406 407 408 409 410 411 412 413 414 415 416 417 421 422 423 424 426 428 429 431 451 500 501 502 503 504 505 506 507 508 510 511 "
	statuses22 = " 100 101 102 200 201 202 203 204 205 206 207 300 301 302 303 304 305 306 307 400 401 402 403 404 405 406 407 408 409 410 411 412 413 414 415 416 417 418 419 420 421 422 423 424 425 426 500 501 502 503 504 505 506 507 508 509 510 "
)

// isURL is ap_is_url: a scheme of letters, digits, "+", "-" and ".",
// then ":".
func isURL(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		if c == ':' {
			return i > 0
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return false
}

// IsURL is ap_is_url (isURL), for the walk.
func IsURL(u string) bool { return isURL(u) }
