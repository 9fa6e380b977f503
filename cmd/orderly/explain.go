package main

// orderly explain: one request decided as serve would, with the trail
// of rules that decided it (explainjson.go: the same as JSON).

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// traceLog collects the steps of a decision for explain.
type traceLog struct{ events []policy.Event }

func (t *traceLog) Enabled() bool        { return true }
func (t *traceLog) Trace(e policy.Event) { t.events = append(t.events, e) }

const explainUsage = `usage: orderly explain [-config orderly.hcl] -ip ADDR [-method M] [-user U -password P]
                       [-header 'Name: value']... [-tls] [-cert chain.pem] [-policy legacy|native]
                       [-format text|json] URL

Decides one request as serve would and shows why: the sections that applied
in Apache's merge order and every rule evaluated, each with its rule ID (the
ID legacy.demote takes) and file:line.

Exit status: 0 decided (allowed or denied), 2 bad usage or a configuration
serve would refuse.
`

// cmdExplain decides one request and prints the decision with its trail.
func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explain", explainUsage, stderr)
	configPath := fs.String("config", "orderly.hcl", "configuration file")
	ip := fs.String("ip", "", "client address (required)")
	method := fs.String("method", "GET", "request method")
	user := fs.String("user", "", "Basic user name")
	password := fs.String("password", "", "Basic password")
	which := fs.String("policy", "legacy", `the policy to decide by: "legacy" or "native" (the native block)`)
	overTLS := fs.Bool("tls", false, "the request comes over TLS (an https:// URL does too)")
	certFile := fs.String("cert", "", "the client certificate chain (PEM, leaf first); implies -tls")
	var headers headerFlags
	fs.Var(&headers, "header", "extra request header 'Name: value' (repeatable)")
	format := fs.String("format", "text", `output format: "text" or "json"`)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || *ip == "" {
		fmt.Fprintln(stderr, "orderly explain: want -ip ADDR and one URL")
		fs.Usage()
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "explain: -format %q: want \"text\" or \"json\"\n", *format)
		return 2
	}
	addr, err := netip.ParseAddr(*ip)
	if err != nil {
		fmt.Fprintf(stderr, "explain: -ip %q: %v\n", *ip, err)
		return 2
	}
	target := fs.Arg(0)
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		target = u.RequestURI()
		*overTLS = *overTLS || strings.EqualFold(u.Scheme, "https")
	}
	tlsInfo, err := explainTLS(*overTLS, *certFile) // explaintls.go
	if err != nil {
		fmt.Fprintf(stderr, "explain: -cert: %v\n", err)
		return 2
	}
	rc, pols, ok := setup(*configPath, stderr)
	if !ok {
		return 2
	}
	engine := pols.Legacy
	switch *which {
	case proxy.PolicyLegacy:
	case proxy.PolicyNative:
		if pols.Native == nil {
			fmt.Fprintf(stderr, "explain: -policy native: %s has no native block\n", *configPath)
			return 2
		}
		engine = pols.Native
	default:
		fmt.Fprintf(stderr, "explain: -policy %q: want legacy or native\n", *which)
		return 2
	}
	if _, err := restoreState(*configPath, rc, pols); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	resolver := proxy.NewResolver(rc.ResolverAddr, rc.ResolverTimeout)
	hdr := http.Header{}
	// The fields in the order given, as spelled: SetEnvIf's header-name
	// regexes read them so (translate.Headers).
	var fields []translate.HeaderField
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			fmt.Fprintf(stderr, "explain: -header %q: want 'Name: value'\n", h)
			return 2
		}
		hdr.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		fields = append(fields, translate.HeaderField{Name: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	cred := policy.Credentials{}
	if *user != "" {
		cred = policy.Credentials{Present: true, Basic: true, User: *user, Password: *password}
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(*user+":"+*password)))
		kept := fields[:0]
		for _, f := range fields {
			if !strings.EqualFold(f.Name, "Authorization") {
				kept = append(kept, f)
			}
		}
		fields = append(kept, translate.HeaderField{Name: "Authorization", Value: hdr.Get("Authorization")})
	}
	req := &walk.Request{
		Method: *method, Target: target, Proto: "HTTP/1.1", Header: hdr, Headers: translate.MergeFields(fields), Host: hdr.Get("Host"),
		ClientAddr: addr, LocalAddr: netip.MustParseAddr("127.0.0.1"), Auth: cred,
		Resolver: resolver, TLSInfo: tlsInfo,
	}
	tl := &traceLog{}
	res := engine.Decide(req, tl)
	if *format == "json" {
		ex := newExplanation(*method, target, addr, *user, *which, res, tl.events, filepath.Dir(*configPath))
		ex.addSemantics(rc, engine.Config(), req, res)
		if err := ex.write(stdout); err != nil {
			fmt.Fprintf(stderr, "explain: %v\n", err)
			return 1
		}
		return 0
	}
	printExplain(stdout, *method, target, addr, *user, res, tl.events, filepath.Dir(*configPath))
	explainOther(stdout, rc, engine.Config(), req, res)
	for _, d := range engine.Config().Unfaithful {
		fmt.Fprintf(stdout, "not evaluated: %s: %s (legacy.forward_unfaithful: the backend must enforce it)\n", d.Pos, d.Text)
	}
	return 0
}

// printExplain writes the decision, the sections that applied in Apache's
// merge order, and every rule evaluated, each with file:line.
func printExplain(w io.Writer, method, target string, addr netip.Addr, user string, res walk.Result, events []policy.Event, base string) {
	rel := func(f string) string {
		if r, err := filepath.Rel(base, f); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return f
	}
	verdict := "ALLOW"
	if !res.Allowed() {
		verdict = fmt.Sprintf("DENY %d", res.Status)
	}
	who := addr.String()
	if user != "" {
		who += " as " + user
	}
	fmt.Fprintf(w, "request:  %s %s from %s\n", method, target, who)
	fmt.Fprintf(w, "decision: %s (%s layer)\n", verdict, res.Layer)
	if res.Layer == policy.LayerRequest {
		fmt.Fprintln(w, "rule:     none: Apache refuses the request line itself, before access control")
	} else {
		fmt.Fprintf(w, "rule:     %s\n", describeRule(res.Rule))
	}
	if res.URI != "" {
		fmt.Fprintf(w, "uri:      %s\n", res.URI)
	}
	if res.Filename != "" {
		fmt.Fprintf(w, "filename: %s\n", res.Filename)
	}
	if res.PathInfo != "" {
		fmt.Fprintf(w, "pathinfo: %s\n", res.PathInfo)
	}
	if res.Index != "" {
		fmt.Fprintf(w, "index:    %s (DirectoryIndex)\n", res.Index)
	}
	if rw := res.Rewritten; rw != nil {
		fmt.Fprintf(w, "rewrite:  %s rules, %s: %s -> %s (%s)\n", rw.Phase, rw.Action, rw.From, rw.To, describeRule(rw.Rule))
	}
	fmt.Fprintln(w, "sections, in Apache's merge order:")
	if len(res.Sections) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for i, s := range res.Sections {
		fmt.Fprintf(w, "  %d. %s:%d  %s\n", i+1, rel(s.Pos.File), s.Pos.Line, s)
	}
	from := func(sec *translate.Section) string {
		if sec == nil {
			return "Apache's defaults"
		}
		for i, s := range res.Sections {
			if s == sec {
				return fmt.Sprintf("section %d, %s", i+1, s)
			}
		}
		return sec.String()
	}
	if len(res.Sections) > 0 || res.Layer != policy.LayerRequest {
		fmt.Fprintf(w, "in force: Order/Allow/Deny/Satisfy from %s\n", from(res.CompatFrom))
		fmt.Fprintf(w, "          Require from %s\n", from(res.AuthzFrom))
	}
	fmt.Fprintln(w, "trail:")
	for _, e := range events {
		id, what := "", e.Text+" (Apache's default)"
		if e.Rule != nil {
			id, what = e.Rule.ID, ruleAt(e.Rule)
		}
		fmt.Fprintf(w, "  %-6s  %-12s  %-44s -> %s\n", e.Layer, id, what, e.Result)
	}
	for _, l := range res.Logs() {
		fmt.Fprintf(w, "log:      [%s:error] %s: %s\n", l.Module, l.Code, l.Message())
	}
}

// describeRule is a rule as explain shows it: its ID (the one
// legacy.demote takes) in brackets, file:line and text.
func describeRule(r *policy.Rule) string {
	if r == nil || r.Default || r.ID == "" {
		return ruleAt(r)
	}
	return "[" + r.ID + "] " + ruleAt(r)
}

// ruleAt is a rule's file:line and text.
func ruleAt(r *policy.Rule) string {
	switch {
	case r == nil:
		return "(Apache's default)"
	case r.Default:
		return r.Text
	}
	return fmt.Sprintf("%s:%d %s", r.File, r.Line, r.Text)
}

// explainOther decides the request again under the other semantics and
// says whether the answer differs: where it does, an upgrade that keeps
// mod_access_compat changes behaviour silently.
func explainOther(w io.Writer, rc *runtimeConfig, cfg *translate.Config, req *walk.Request, res walk.Result) {
	other, ores, err := decideOther(rc, cfg, req)
	fmt.Fprintf(w, "semantics: %s", cfg.Semantics)
	if err != nil {
		fmt.Fprintf(w, "; under %s the configuration does not load\n", other)
		return
	}
	verdict := func(r walk.Result) string {
		if r.Allowed() {
			return "ALLOW"
		}
		return fmt.Sprintf("DENY %d", r.Status)
	}
	if verdict(ores) == verdict(res) {
		fmt.Fprintf(w, "; %s decides the same\n", other)
	} else {
		fmt.Fprintf(w, "; under %s: %s (%s layer, %s): THE UPGRADE CHANGES THIS ANSWER\n", other, verdict(ores), ores.Layer, describeRule(ores.Rule))
	}
	for _, d := range cfg.Differences {
		fmt.Fprintf(w, "difference: %s: %s\n", differenceAt(rc, d), d.Text)
	}
}

// decideOther decides req again with the legacy configuration read under
// the semantics cfg is not read with (2.2 or 2.4-compat), which it
// returns; err says the configuration does not load so.
func decideOther(rc *runtimeConfig, cfg *translate.Config, req *walk.Request) (translate.Semantics, walk.Result, error) {
	other := translate.Compat24
	if cfg.Semantics == translate.Compat24 {
		other = translate.Legacy22
	}
	opt := rc.Legacy
	opt.Semantics = other
	ocfg, err := translate.Load(rc.LegacyFiles, opt)
	if err != nil {
		return other, walk.Result{}, err
	}
	var fsys walk.FS = walk.OS
	if len(rc.PathMap) > 0 {
		fsys = walk.NewPathMap(walk.OS, rc.PathMap)
	}
	oe := walk.New(ocfg, fsys, proxy.NewIdentity())
	oe.SetLegacyAddress(rc.LegacyIP, rc.LegacyPort)
	r2 := *req
	return other, oe.Decide(&r2, nil), nil
}

// differenceAt is where a difference between the semantics is, relative
// to the first legacy file's directory when below it.
func differenceAt(rc *runtimeConfig, d translate.Difference) string {
	if d.Pos.File == "" {
		return "(whole configuration)"
	}
	if r, err := filepath.Rel(filepath.Dir(rc.LegacyFiles[0]), d.Pos.File); err == nil && !strings.HasPrefix(r, "..") {
		return fmt.Sprintf("%s:%d", r, d.Pos.Line)
	}
	return d.Pos.String()
}
