package translate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// The merges of this file are Apache's per-module merge functions, each
// named in its test; a setting a section leaves unset inherits, one it
// sets replaces, whatever the value (Off, 0 and an empty list included).

// mod_dir's merge_dir_configs: each switch the section sets replaces the
// inherited one.
func TestMergeDirSettings(t *testing.T) {
	r1, r2 := &policy.Rule{ID: "r1"}, &policy.Rule{ID: "r2"}
	base := &DirSettings{Slash: 1, CheckHandler: 1, IndexRedirect: 302, IndexRedirectRule: r1}
	tests := []struct {
		name      string
		base, add *DirSettings
		want      *DirSettings
	}{
		{"nothing inherited", nil, &DirSettings{Slash: 0, CheckHandler: -1, IndexRedirect: -1}, &DirSettings{Slash: 0, CheckHandler: -1, IndexRedirect: -1}},
		{"nothing set", base, nil, base},
		{"all unset", base, &DirSettings{Slash: -1, CheckHandler: -1, IndexRedirect: -1}, base},
		{"all off", base, &DirSettings{Slash: 0, CheckHandler: 0, IndexRedirect: 0, IndexRedirectRule: r2}, &DirSettings{Slash: 0, CheckHandler: 0, IndexRedirect: 0, IndexRedirectRule: r2}},
		{"DirectorySlash Off alone", base, &DirSettings{Slash: 0, CheckHandler: -1, IndexRedirect: -1}, &DirSettings{Slash: 0, CheckHandler: 1, IndexRedirect: 302, IndexRedirectRule: r1}},
		{"DirectoryCheckHandler Off alone", base, &DirSettings{Slash: -1, CheckHandler: 0, IndexRedirect: -1}, &DirSettings{Slash: 1, CheckHandler: 0, IndexRedirect: 302, IndexRedirectRule: r1}},
		{"DirectoryIndexRedirect 301 alone", base, &DirSettings{Slash: -1, CheckHandler: -1, IndexRedirect: 301, IndexRedirectRule: r2}, &DirSettings{Slash: 1, CheckHandler: 1, IndexRedirect: 301, IndexRedirectRule: r2}},
		{"On over Off", &DirSettings{Slash: 0, CheckHandler: 0, IndexRedirect: 0}, &DirSettings{Slash: 1, CheckHandler: 1, IndexRedirect: -1}, &DirSettings{Slash: 1, CheckHandler: 1, IndexRedirect: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := *base
			got := MergeDirSettings(tt.base, tt.add)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if *base != before {
				t.Errorf("the inherited settings changed: %+v", base)
			}
		})
	}
}

// merge_core_dir_configs on Options with +/- lines only: Includes with
// exec is lost to IncludesNOEXEC below, and only then.
func TestOptionsMergeIncludes(t *testing.T) {
	const inc, exec = OptIncludes, OptIncWithExec
	tests := []struct {
		name      string
		base, add CoreOptions
		want      OptionBits
	}{
		{"Includes, +IncludesNOEXEC below", CoreOptions{Opts: inc | exec}, CoreOptions{Opts: OptUnset | inc, Add: inc}, inc},
		{"Includes, +Indexes below", CoreOptions{Opts: inc | exec}, CoreOptions{Opts: OptUnset | OptIndexes, Add: OptIndexes}, inc | exec | OptIndexes},
		{"Includes, nothing below", CoreOptions{Opts: inc | exec}, CoreOptions{Opts: OptUnset}, inc | exec},
		{"Includes, +Includes below", CoreOptions{Opts: inc | exec}, CoreOptions{Opts: OptUnset | inc | exec, Add: inc | exec}, inc | exec},
		// "Options Includes" then "-IncludesNOEXEC" leaves exec alone
		// (set_options removes OPT_INCLUDES only): +IncludesNOEXEC below
		// brings Includes back with it.
		{"exec alone, +IncludesNOEXEC below", CoreOptions{Opts: exec}, CoreOptions{Opts: OptUnset | inc, Add: inc}, inc | exec},
		{"IncludesNOEXEC, +IncludesNOEXEC below", CoreOptions{Opts: inc}, CoreOptions{Opts: OptUnset | inc, Add: inc}, inc},
	}
	for _, tt := range tests {
		if got := tt.base.Merge(tt.add); got.Opts != tt.want {
			t.Errorf("%s: Opts %b, want %b", tt.name, got.Opts, tt.want)
		}
	}
}

// merge_core_server_configs: a virtual host's HttpProtocolOptions (each
// pair on its own) and StrictHostCheck where it set them, else the main
// server's. ServerName's scheme is not inherited: ap_init_virtual_host
// starts a host with none (server_scheme NULL) and nothing copies the
// main server's.
func TestMergeServerLimits(t *testing.T) {
	main := ServerLimits{RequestLine: 100, Protocol: ProtocolOptions{Conformance: 2, Methods: 1, HTTP09: 2}, StrictHostCheck: 1, Name: "main.test", Scheme: "https", Port: 8443}
	tests := []struct {
		name string
		own  ServerLimits
		want ServerLimits
	}{
		{"nothing set", ServerLimits{RequestLine: 200, StrictHostCheck: -1},
			ServerLimits{RequestLine: 200, Protocol: main.Protocol, StrictHostCheck: 1}},
		{"all set", ServerLimits{Protocol: ProtocolOptions{Conformance: 1, Methods: 2, HTTP09: 1}, StrictHostCheck: 0, Name: "own.test", Scheme: "http", Port: 80},
			ServerLimits{Protocol: ProtocolOptions{Conformance: 1, Methods: 2, HTTP09: 1}, StrictHostCheck: 0, Name: "own.test", Scheme: "http", Port: 80}},
		{"conformance alone", ServerLimits{Protocol: ProtocolOptions{Conformance: 1}, StrictHostCheck: -1},
			ServerLimits{Protocol: ProtocolOptions{Conformance: 1, Methods: 1, HTTP09: 2}, StrictHostCheck: 1}},
		{"methods alone", ServerLimits{Protocol: ProtocolOptions{Methods: 2}, StrictHostCheck: -1},
			ServerLimits{Protocol: ProtocolOptions{Conformance: 2, Methods: 2, HTTP09: 2}, StrictHostCheck: 1}},
		{"HTTP/0.9 alone", ServerLimits{Protocol: ProtocolOptions{HTTP09: 1}, StrictHostCheck: -1},
			ServerLimits{Protocol: ProtocolOptions{Conformance: 2, Methods: 1, HTTP09: 1}, StrictHostCheck: 1}},
		{"StrictHostCheck Off", ServerLimits{StrictHostCheck: 0},
			ServerLimits{Protocol: main.Protocol, StrictHostCheck: 0}},
		{"name without a scheme", ServerLimits{StrictHostCheck: -1, Name: "own.test"},
			ServerLimits{Protocol: main.Protocol, StrictHostCheck: 1, Name: "own.test"}},
	}
	for _, tt := range tests {
		if got := mergeServerLimits(main, tt.own); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// merge_alias_dir_config and merge_core_dir_configs: a section's
// Redirects come before those it inherits; its ErrorDocuments override
// the inherited ones for their statuses; its one-argument Redirect,
// RedirectRelative and UseCanonicalName replace the inherited ones where
// it sets them.
func TestMergeDirRedirects(t *testing.T) {
	ra, rb, ex1, ex2 := &Redirect{Path: "/a"}, &Redirect{Path: "/b"}, &Redirect{Status: 410}, &Redirect{Status: 302, URL: "http://x.test/"}
	base := &DirRedirects{ErrorDocs: []ErrorDoc{{403, "http://err.test/403"}, {404, "http://err.test/404"}}, Redirects: []*Redirect{rb}, Expr: ex1, Relative: 1, Canonical: 2}
	unset := func() *DirRedirects { return &DirRedirects{Relative: -1} }
	tests := []struct {
		name      string
		base, add *DirRedirects
		want      *DirRedirects
	}{
		{"nothing set", base, nil, base},
		{"nothing inherited", nil, unset(), unset()},
		{"all unset", base, unset(), base},
		{"all set", base,
			&DirRedirects{ErrorDocs: []ErrorDoc{{403, ""}, {500, "http://err.test/500"}}, Redirects: []*Redirect{ra}, Expr: ex2, Relative: 0, Canonical: 1},
			&DirRedirects{ErrorDocs: []ErrorDoc{{403, "http://err.test/403"}, {404, "http://err.test/404"}, {403, ""}, {500, "http://err.test/500"}}, Redirects: []*Redirect{ra, rb}, Expr: ex2, Relative: 0, Canonical: 1}},
		{"RedirectRelative Off alone", base, &DirRedirects{Relative: 0},
			&DirRedirects{ErrorDocs: base.ErrorDocs, Redirects: []*Redirect{rb}, Expr: ex1, Relative: 0, Canonical: 2}},
		{"UseCanonicalName On alone", base, &DirRedirects{Relative: -1, Canonical: 1},
			&DirRedirects{ErrorDocs: base.ErrorDocs, Redirects: []*Redirect{rb}, Expr: ex1, Relative: 1, Canonical: 1}},
		{"a Redirect alone", base, &DirRedirects{Relative: -1, Redirects: []*Redirect{ra}},
			&DirRedirects{ErrorDocs: base.ErrorDocs, Redirects: []*Redirect{ra, rb}, Expr: ex1, Relative: 1, Canonical: 2}},
		{"an ErrorDocument alone", base, &DirRedirects{Relative: -1, ErrorDocs: []ErrorDoc{{404, ""}}},
			&DirRedirects{ErrorDocs: []ErrorDoc{{403, "http://err.test/403"}, {404, "http://err.test/404"}, {404, ""}}, Redirects: []*Redirect{rb}, Expr: ex1, Relative: 1, Canonical: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeDirRedirects(tt.base, tt.add)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// What ErrorDocument answers, merged: the section's for its statuses.
	m := MergeDirRedirects(base, &DirRedirects{Relative: -1, ErrorDocs: []ErrorDoc{{404, ""}, {500, "http://err.test/500"}}})
	for status, want := range map[int]string{403: "http://err.test/403", 404: "", 500: "http://err.test/500", 401: ""} {
		if got := m.ErrorURL(status); got != want {
			t.Errorf("ErrorURL(%d) = %q, want %q", status, got, want)
		}
	}
	if len(base.ErrorDocs) != 2 || len(base.Redirects) != 1 {
		t.Errorf("the inherited lists changed: %+v", base)
	}
}

// ssl_config_perdir_merge: SSLRequireSSL once set stays; SSLOptions with
// +/- words only add to and remove from the inherited ones, a plain word
// replaces them; SSLVerifyClient, SSLVerifyDepth and SSLUserName replace
// where set.
func TestMergeSSLDir(t *testing.T) {
	req, opt, ver, usr := &policy.Rule{ID: "req"}, &policy.Rule{ID: "opt"}, &policy.Rule{ID: "ver"}, &policy.Rule{ID: "usr"}
	req2, opt2, ver2, usr2 := &policy.Rule{ID: "req2"}, &policy.Rule{ID: "opt2"}, &policy.Rule{ID: "ver2"}, &policy.Rule{ID: "usr2"}
	cn := SSLVar{Kind: SSLVarDNAttr, Attr: "CN"}
	base := &SSLDir{Required: true, RequiredRule: req,
		Options:     SSLOptions{Opts: SSLStdEnvVars | SSLFakeBasicAuth, Add: SSLFakeBasicAuth, Del: SSLExportCertData},
		OptionsRule: opt, Verify: VerifyRequire, VerifyRule: ver, Depth: 3, UserName: "SSL_CLIENT_S_DN_CN", UserNameVar: cn, UserNameRule: usr}
	tests := []struct {
		name      string
		base, add *SSLDir
		want      *SSLDir
	}{
		{"nothing set", base, nil, base},
		{"nothing inherited", nil, newSSLDir(), newSSLDir()},
		{"all unset", base, newSSLDir(), base},
		{"all set", base,
			&SSLDir{Required: true, RequiredRule: req2, Options: SSLOptions{Opts: SSLStrictRequire, Abs: true}, OptionsRule: opt2, Verify: VerifyOptional, VerifyRule: ver2, Depth: 0, UserName: "SSL_CLIENT_S_DN_O", UserNameRule: usr2},
			&SSLDir{Required: true, RequiredRule: req2, Options: SSLOptions{Opts: SSLStrictRequire, Abs: true}, OptionsRule: opt2, Verify: VerifyOptional, VerifyRule: ver2, Depth: 0, UserName: "SSL_CLIENT_S_DN_O", UserNameRule: usr2}},
		{"+/- SSLOptions", base,
			&SSLDir{Options: SSLOptions{Opts: SSLExportCertData, Add: SSLExportCertData, Del: SSLFakeBasicAuth}, OptionsRule: opt2, Depth: -1},
			&SSLDir{Required: true, RequiredRule: req, Options: SSLOptions{Opts: SSLStdEnvVars | SSLExportCertData, Add: SSLExportCertData, Del: SSLFakeBasicAuth}, OptionsRule: opt2, Verify: VerifyRequire, VerifyRule: ver, Depth: 3, UserName: "SSL_CLIENT_S_DN_CN", UserNameVar: cn, UserNameRule: usr}},
		{"SSLVerifyDepth 0 alone", base, &SSLDir{Depth: 0},
			&SSLDir{Required: true, RequiredRule: req, Options: base.Options, OptionsRule: opt, Verify: VerifyRequire, VerifyRule: ver, Depth: 0, UserName: "SSL_CLIENT_S_DN_CN", UserNameVar: cn, UserNameRule: usr}},
		{"SSLVerifyClient alone", base, &SSLDir{Verify: VerifyNone, VerifyRule: ver2, Depth: -1},
			&SSLDir{Required: true, RequiredRule: req, Options: base.Options, OptionsRule: opt, Verify: VerifyNone, VerifyRule: ver2, Depth: 3, UserName: "SSL_CLIENT_S_DN_CN", UserNameVar: cn, UserNameRule: usr}},
		{"SSLRequireSSL below none", &SSLDir{Depth: -1}, &SSLDir{Required: true, RequiredRule: req2, Depth: -1},
			&SSLDir{Required: true, RequiredRule: req2, Depth: -1}},
		{"absolute SSLOptions inherited", &SSLDir{Options: SSLOptions{Opts: SSLStdEnvVars, Abs: true}, OptionsRule: opt, Depth: -1}, &SSLDir{Options: SSLOptions{Opts: SSLFakeBasicAuth, Add: SSLFakeBasicAuth}, Depth: -1},
			&SSLDir{Options: SSLOptions{Opts: SSLStdEnvVars | SSLFakeBasicAuth, Add: SSLFakeBasicAuth, Abs: true}, OptionsRule: opt, Depth: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MergeSSLDir(tt.base, tt.add)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// ssl_config_server_merge for a virtual host: its SSLEngine, client
// verification and CA where it set them, else the main server's; and its
// per-directory defaults merged over the main server's.
func TestMergeSSL(t *testing.T) {
	ca, ca2, ver, ver2 := &policy.Rule{ID: "ca"}, &policy.Rule{ID: "ca2"}, &policy.Rule{ID: "ver"}, &policy.Rule{ID: "ver2"}
	mainSSL := &SSLServer{Engine: SSLEngineOn, Verify: VerifyRequire, VerifyRule: ver, Depth: 4, CAFile: "ca.pem", CAPath: "certs", CARule: ca}
	tests := []struct {
		name      string
		main, own *SSLServer
		want      *SSLServer
	}{
		{"neither", nil, nil, nil},
		{"main only", mainSSL, nil, mainSSL},
		{"own only", nil, &SSLServer{Engine: SSLEngineOn, Depth: -1}, &SSLServer{Engine: SSLEngineOn, Depth: -1}},
		{"own unset", mainSSL, &SSLServer{Depth: -1}, mainSSL},
		{"own all set", mainSSL, &SSLServer{Engine: SSLEngineOff, Verify: VerifyOptional, VerifyRule: ver2, Depth: 0, CAFile: "own.pem", CAPath: "own", CARule: ca2},
			&SSLServer{Engine: SSLEngineOff, Verify: VerifyOptional, VerifyRule: ver2, Depth: 0, CAFile: "own.pem", CAPath: "own", CARule: ca2}},
		{"own CA file only", mainSSL, &SSLServer{Depth: -1, CAFile: "own.pem", CARule: ca2},
			&SSLServer{Engine: SSLEngineOn, Verify: VerifyRequire, VerifyRule: ver, Depth: 4, CAFile: "own.pem", CAPath: "certs", CARule: ca2}},
		{"own CA path only", mainSSL, &SSLServer{Depth: -1, CAPath: "own", CARule: ca2},
			&SSLServer{Engine: SSLEngineOn, Verify: VerifyRequire, VerifyRule: ver, Depth: 4, CAFile: "ca.pem", CAPath: "own", CARule: ca2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mainDir, ownDir := &SSLDir{UserName: "SSL_CLIENT_S_DN_CN", Depth: -1}, &SSLDir{Verify: VerifyRequire, Depth: -1}
			main := &Config{SSL: tt.main, Defaults: &DirConf{SSL: mainDir}}
			own := &Config{SSL: tt.own, Defaults: &DirConf{SSL: ownDir}}
			c := mergeServer(main, own, nil)
			if !reflect.DeepEqual(c.SSL, tt.want) {
				t.Errorf("server: got %+v, want %+v", c.SSL, tt.want)
			}
			if want := (&SSLDir{UserName: "SSL_CLIENT_S_DN_CN", Verify: VerifyRequire, Depth: -1}); !reflect.DeepEqual(c.Defaults.SSL, want) {
				t.Errorf("defaults: got %+v, want %+v", c.Defaults.SSL, want)
			}
		})
	}
}

// ap_get_mime_headers_core's apr_table_compress: fields of one name
// (ASCII case aside) become one, where and as the first was spelled,
// values joined by ", ".
func TestMergeFieldsSpelling(t *testing.T) {
	f := func(kv ...string) []HeaderField {
		var out []HeaderField
		for i := 0; i < len(kv); i += 2 {
			out = append(out, HeaderField{kv[i], kv[i+1]})
		}
		return out
	}
	many := func(n int, dup bool) []HeaderField {
		var out []HeaderField
		for i := range n {
			out = append(out, HeaderField{fmt.Sprintf("X-F%d", i), "v"})
		}
		if dup {
			out[n-1].Name = "x-f0"
		}
		return out
	}
	tests := []struct {
		name   string
		fields []HeaderField
		want   []HeaderField
	}{
		{"none", nil, nil},
		{"one", f("Host", "a"), f("Host", "a")},
		{"distinct", f("Host", "a", "Accept", "b", "Cookie", "c"), f("Host", "a", "Accept", "b", "Cookie", "c")},
		{"case aside", f("Cookie", "a=1", "Host", "h", "COOKIE", "b=2", "cookie", "c=3"), f("Cookie", "a=1, b=2, c=3", "Host", "h")},
		{"the second and third", f("Host", "h", "X-A", "1", "x-a", "2"), f("Host", "h", "X-A", "1, 2")},
		{"the first two", f("X-A", "1", "x-A", "2", "Host", "h"), f("X-A", "1, 2", "Host", "h")},
		{"same length, other name", f("X-Ab", "1", "X-Ac", "2", "X-AB", "3"), f("X-Ab", "1, 3", "X-Ac", "2")},
		{"not folded beyond ASCII", f("X-\u212a", "1", "X-k", "2"), f("X-\u212a", "1", "X-k", "2")},
		{"32 distinct", many(32, false), many(32, false)},
		{"33 distinct", many(33, false), many(33, false)},
		{"32, the last repeats the first", many(32, true), append(append(many(1, false)[:0:0], HeaderField{"X-F0", "v, v"}), many(31, false)[1:]...)},
		{"40, the last repeats the first", many(40, true), append(append(many(1, false)[:0:0], HeaderField{"X-F0", "v, v"}), many(39, false)[1:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]HeaderField(nil), tt.fields...)
			got := mergeFields(tt.fields)
			if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual([]HeaderField(got), tt.want)) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if !reflect.DeepEqual(in, tt.fields) {
				t.Errorf("the fields changed: %q", tt.fields)
			}
		})
	}
	// Up to 32 fields with no name repeated are returned as they are, not
	// copied.
	for _, n := range []int{1, 2, 31, 32} {
		in := many(n, false)
		if got := mergeFields(in); &got[0] != &in[0] {
			t.Errorf("%d distinct fields were copied", n)
		}
	}
}

// A virtual host's configuration (ap_fixup_virtual_hosts and the modules'
// server merges): the main server's sections first, the host's own
// aliases and redirects first, settings the host leaves unset inherited.
func TestMergeServer(t *testing.T) {
	trace, trace2 := &policy.Rule{ID: "trace"}, &policy.Rule{ID: "trace2"}
	sec := func(path string, depth int) *Section { return &Section{Kind: KindDirectory, Path: path, Depth: depth} }
	newMain := func() *Config {
		o := CoreOptions{Opts: OptIndexes | OptSymLinks}
		return &Config{
			DocumentRoot: "/srv/main", Aliases: []Alias{{Fake: "/m"}},
			Dirs: []*Section{sec("/srv/", 1), sec("/srv/main/deep/", 3)}, Locations: []*Section{{Kind: KindLocation, Path: "/main"}},
			Defaults: &DirConf{DirIndex: []string{"index.html"}, HostnameLookups: LookupsOn, Options: &o,
				Limits: &DirLimits{Body: 100}, Redirects: &DirRedirects{Relative: 1, Canonical: 1}},
			Limits:      ServerLimits{StrictHostCheck: 1},
			Redirects:   []*Redirect{{Path: "/mr"}},
			TraceEnable: "off", TraceRule: trace, AccessFileNames: []string{".htaccess"}, MergeSlashes: true,
			AllowEncodedSlashes: EncodedSlashesOn,
			VHosts:              []*VHost{{}},
		}
	}
	unsetOwn := func() *Config {
		o := CoreOptions{Opts: OptUnset | OptSymLinks}
		return &Config{Defaults: &DirConf{Options: &o}, Limits: ServerLimits{StrictHostCheck: -1}, MergeSlashes: false, AllowEncodedSlashes: EncodedSlashesOff}
	}
	t.Run("host sets nothing", func(t *testing.T) {
		main, own := newMain(), unsetOwn()
		c := mergeServer(main, own, map[string]bool{})
		if c.VHosts != nil || c.DocumentRoot != "/srv/main" || len(c.Aliases) != 1 || len(c.Dirs) != 2 || len(c.Locations) != 1 {
			t.Errorf("merged %+v", c)
		}
		d := c.Defaults
		if strings.Join(d.DirIndex, " ") != "index.html" || d.HostnameLookups != LookupsOn || d.Limits.Body != 100 || d.Redirects.Canonical != 1 {
			t.Errorf("defaults %+v", d)
		}
		// The host's OptUnset|FollowSymLinks (create_core_dir_config)
		// merged over the main server's: the main server's.
		if d.Options == nil || d.Options.Opts != OptIndexes|OptSymLinks {
			t.Errorf("options %+v", d.Options)
		}
		if c.Limits.StrictHostCheck != 1 || c.TraceEnable != "off" || c.TraceRule != trace || !c.MergeSlashes || strings.Join(c.AccessFileNames, " ") != ".htaccess" {
			t.Errorf("server %+v", c)
		}
		// AllowEncodedSlashes: the host's own, set or not.
		if c.AllowEncodedSlashes != EncodedSlashesOff {
			t.Errorf("AllowEncodedSlashes %v, want the host's Off", c.AllowEncodedSlashes)
		}
		if main.Defaults.Options.Opts != OptIndexes|OptSymLinks || len(main.Dirs) != 2 || len(main.VHosts) != 1 {
			t.Errorf("the main server changed: %+v", main)
		}
	})
	t.Run("host sets everything", func(t *testing.T) {
		main, own := newMain(), unsetOwn()
		own.DocumentRoot = "/srv/own"
		own.Aliases = []Alias{{Fake: "/o"}}
		own.Dirs = []*Section{sec("/srv/own/", 2), sec("/", 0)}
		own.Locations = []*Section{{Kind: KindLocation, Path: "/own"}}
		own.Defaults.DirIndex = []string{"home.html"}
		own.Defaults.HostnameLookups = LookupsOff
		own.Defaults.Options = &CoreOptions{Opts: OptUnset | OptExecCGI, Add: OptExecCGI, Remove: OptIndexes}
		own.Defaults.Limits = &DirLimits{Body: 0}
		own.Defaults.Redirects = &DirRedirects{Relative: 0}
		own.Limits.StrictHostCheck = 0
		own.Redirects = []*Redirect{{Path: "/or"}}
		own.TraceEnable, own.TraceRule = "on", trace2
		own.AccessFileNames = []string{".acl"}
		own.AllowEncodedSlashes = EncodedSlashesNoDecode
		c := mergeServer(main, own, map[string]bool{"accessfilename": true, "mergeslashes": true})
		var dirs, locs []string
		for _, s := range c.Dirs {
			dirs = append(dirs, s.Path)
		}
		for _, s := range c.Locations {
			locs = append(locs, s.Path)
		}
		// Directories sorted by depth, stable: the main server's first
		// among equals.
		if got := strings.Join(dirs, " "); got != "/ /srv/ /srv/own/ /srv/main/deep/" {
			t.Errorf("directories %s", got)
		}
		if got := strings.Join(locs, " "); got != "/main /own" {
			t.Errorf("locations %s", got)
		}
		if c.DocumentRoot != "/srv/own" || len(c.Aliases) != 2 || c.Aliases[0].Fake != "/o" || len(c.Redirects) != 2 || c.Redirects[0].Path != "/or" {
			t.Errorf("merged %+v", c)
		}
		d := c.Defaults
		if strings.Join(d.DirIndex, " ") != "home.html" || d.HostnameLookups != LookupsOff || d.Limits.Body != 0 || d.Redirects.Relative != 0 || d.Redirects.Canonical != 1 {
			t.Errorf("defaults %+v", d)
		}
		if d.Options == nil || d.Options.Opts != OptSymLinks|OptExecCGI {
			t.Errorf("options %+v", d.Options)
		}
		if c.Limits.StrictHostCheck != 0 || c.TraceEnable != "on" || c.TraceRule != trace2 || c.MergeSlashes || strings.Join(c.AccessFileNames, " ") != ".acl" || c.AllowEncodedSlashes != EncodedSlashesNoDecode {
			t.Errorf("server %+v", c)
		}
		if main.Defaults.DirIndex[0] != "index.html" || main.Defaults.Options.Opts != OptIndexes|OptSymLinks || main.DocumentRoot != "/srv/main" {
			t.Errorf("the main server changed: %+v", main)
		}
	})
}

// TestMergeAuthz holds MergeAuthz to merge_authz_core_dir_config: a
// section with only AuthzSendForbiddenOnFailure keeps the Require it
// inherits; AuthMerging Off or unset with Require lines replaces it; And
// and Or combine the two trees (RequireAll, RequireAny) over the methods
// of both; ForbiddenOnFail is inherited unless set.
func TestMergeAuthz(t *testing.T) {
	get, post := policy.MethodMask(1)<<policy.MethodGet, policy.MethodMask(1)<<2 // POST
	a := &policy.Node{Kind: policy.Any, Methods: get, Children: []*policy.Node{{Kind: policy.Leaf, Provider: policy.ProvValidUser, Methods: get}}}
	b := &policy.Node{Kind: policy.Any, Methods: post, Children: []*policy.Node{{Kind: policy.Leaf, Provider: policy.ProvAllDenied, Methods: post}}}
	render := func(z *AuthzSlot) string {
		if z.Root == nil {
			return fmt.Sprintf("nil %d %d", z.Merge, z.ForbiddenOnFail)
		}
		return fmt.Sprintf("%v %d %d %d %d", policy.Render(z.Root, ""), z.Root.Kind, z.Root.Methods, z.Merge, z.ForbiddenOnFail)
	}
	tests := []struct {
		name      string
		base, add *AuthzSlot
		want      string
	}{
		{"no base", nil, &AuthzSlot{Root: b, Merge: MergeAnd, ForbiddenOnFail: -1}, render(&AuthzSlot{Root: b, Merge: MergeAnd, ForbiddenOnFail: -1})},
		{"forbidden only", &AuthzSlot{Root: a, Merge: MergeOr, ForbiddenOnFail: 0}, &AuthzSlot{ForbiddenOnFail: 1},
			render(&AuthzSlot{Root: a, Merge: MergeOr, ForbiddenOnFail: 1})},
		{"forbidden inherited", &AuthzSlot{Root: a, ForbiddenOnFail: 1}, &AuthzSlot{Root: b, ForbiddenOnFail: -1},
			render(&AuthzSlot{Root: b, ForbiddenOnFail: 1})},
		{"unset replaces", &AuthzSlot{Root: a}, &AuthzSlot{Root: b, ForbiddenOnFail: 0}, render(&AuthzSlot{Root: b})},
		{"off replaces", &AuthzSlot{Root: a}, &AuthzSlot{Root: b, Merge: MergeOff}, render(&AuthzSlot{Root: b, Merge: MergeOff})},
		{"off with nothing", &AuthzSlot{Root: a}, &AuthzSlot{Merge: MergeOff}, render(&AuthzSlot{Merge: MergeOff})},
		{"and", &AuthzSlot{Root: a}, &AuthzSlot{Root: b, Merge: MergeAnd},
			render(&AuthzSlot{Root: &policy.Node{Kind: policy.All, Methods: get | post, Children: []*policy.Node{a, b}}, Merge: MergeAnd})},
		{"or", &AuthzSlot{Root: a}, &AuthzSlot{Root: b, Merge: MergeOr},
			render(&AuthzSlot{Root: &policy.Node{Kind: policy.Any, Methods: get | post, Children: []*policy.Node{a, b}}, Merge: MergeOr})},
		{"and over nothing", &AuthzSlot{}, &AuthzSlot{Root: b, Merge: MergeAnd}, render(&AuthzSlot{Root: b, Merge: MergeAnd})},
		{"and with nothing", &AuthzSlot{Root: a}, &AuthzSlot{Merge: MergeAnd}, render(&AuthzSlot{Root: a, Merge: MergeAnd})},
		{"and, neither", &AuthzSlot{}, &AuthzSlot{Merge: MergeOr}, render(&AuthzSlot{Merge: MergeOr})},
	}
	for _, tt := range tests {
		if got := render(MergeAuthz(tt.base, tt.add)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
