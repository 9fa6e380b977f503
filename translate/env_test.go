package translate

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/translate/regex"

	"github.com/orderly-proxy/orderly/policy"
)

// serverEnv builds conf and returns its server-level SetEnvIf list.
func serverEnv(t *testing.T, conf string) []*EnvRule {
	t.Helper()
	cfg, err := loadConf(t, conf)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.ServerEnv
}

func loadConf(t *testing.T, conf string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	if err := os.WriteFile(cf, []byte(strings.ReplaceAll(conf, "@DOCROOT@", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load([]string{cf}, LoadOptions{Options: Options{Semantics: Compat24, DocumentRoot: dir}})
}

// envFields is a Headers of name, value pairs, merged as Apache merges them.
func envFields(kv ...string) Headers {
	var fs []HeaderField
	for i := 0; i+1 < len(kv); i += 2 {
		fs = append(fs, HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return mergeFields(fs)
}

// mergeFields is MergeFields bounded in time: a loop that never ends
// (a mutant's, make mutate) fails at once instead of at go test's
// timeout.
func mergeFields(fs []HeaderField) HeaderFields {
	done := make(chan HeaderFields, 1)
	go func() { done <- MergeFields(fs) }()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		panic("MergeFields did not return within 10 s")
	}
}

// foldView knows its values but for case (Go's form of
// Transfer-Encoding).
type foldView struct{ v string }

func (f foldView) Get(string) (string, bool, Exactness) { return f.v, true, ExactFold }
func (f foldView) LastMatch(_, _ *regex.Regexp) (string, bool, Exactness) {
	return "", false, Unknown
}

// TestApplyEnvHeaders runs SetEnvIf lines over header views: headers_in
// exactly (HeaderFields), Go's header map (HeaderMap), and a view that
// knows a value but for case; the variables set, or the line whose
// attribute cannot be known.
func TestApplyEnvHeaders(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		headers Headers
		header  http.Header
		want    string // the variables set, "name=value" sorted; or "unknown:LINE"
	}{
		{"header", `SetEnvIf X-A "^1$" a`, envFields("x-a", "1"), nil, "a=1"},
		{"merged values", `SetEnvIf X-A "^1, 2$" a`, envFields("X-A", "1", "x-a", "2"), nil, "a=1"},
		{"map joins too", `SetEnvIf X-A "^1, 2$" a`, nil, http.Header{"X-A": {"1", "2"}}, "a=1"},
		{"missing header: the variable", "SetEnvIf X-A ^$ v=x\nSetEnvIf v ^x$ b", envFields(), nil, "b=1 v=x"},
		{"regex: last match", `SetEnvIf ^X-Ro "(.*)" ro=$1`, envFields("X-Ro-A", "a", "X-Other", "o", "X-Ro-B", "b"), nil, "ro=b"},
		{"regex: as spelled (none: tested as \"\")", `SetEnvIf ^X-Ro "(.*)" ro=$1`, envFields("x-ro-a", "a"), nil, "ro="},
		{"regex nocase", `SetEnvIfNoCase ^X-Ro "(.*)" ro=$1`, envFields("x-ro-a", "a"), nil, "ro=a"},
		{"regex: merged", `SetEnvIf ^X-Ro "(.*)" ro=$1`, envFields("X-Ro-A", "a", "X-Ro-B", "b", "X-RO-A", "c"), nil, "ro=b"},
		{"map regex: none can match", `SetEnvIf ^X-Ro "(.+)" ro=$1`, nil, http.Header{"X-Other": {"o"}}, ""},
		{"map regex: spelling unknown", `SetEnvIf ^X-Ro "(.*)" ro=$1`, nil, http.Header{"X-Ro-A": {"a"}}, "unknown:1"},
		{"map regex nocase: one", `SetEnvIfNoCase ^X-Ro "(.*)" ro=$1`, nil, http.Header{"X-Ro-A": {"a"}}, "ro=a"},
		{"map regex nocase: order unknown", `SetEnvIfNoCase ^X-Ro "(.*)" ro=$1`, nil, http.Header{"X-Ro-A": {"a"}, "X-Ro-B": {"b"}}, "unknown:1"},
		{"unknown stops the list", "SetEnvIf X-A . a\nSetEnvIf ^X-Ro . ro\nSetEnvIf X-A . later", nil, http.Header{"X-A": {"1"}, "X-Ro-A": {"a"}}, "unknown:2"},
		{"fold: nocase substring", `SetEnvIfNoCase Transfer-Encoding chunked te`, foldView{"chunked"}, nil, "te=1"},
		{"fold: nocase regex", `SetEnvIfNoCase Transfer-Encoding ^chunked$ te`, foldView{"chunked"}, nil, "te=1"},
		{"fold: case-sensitive", `SetEnvIf Transfer-Encoding chunked te`, foldView{"chunked"}, nil, "unknown:1"},
		{"fold: nocase with $1", `SetEnvIfNoCase Transfer-Encoding (chunked) te=$1`, foldView{"chunked"}, nil, "unknown:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := serverEnv(t, tt.conf)
			var env policy.Env
			in := &EnvInput{Headers: tt.headers, Header: tt.header, Dry: true}
			got := ""
			if r := ApplyEnv(rules, in, &env); r != nil {
				got = "unknown:" + strconv.Itoa(r.Rule.Line)
			} else {
				var kv []string
				for _, n := range []string{"a", "b", "v", "ro", "te", "later"} {
					if v, ok := env.Get(n); ok {
						kv = append(kv, n+"="+v)
					}
				}
				got = strings.Join(kv, " ")
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestApplyEnvReread: match_headers reads an attribute's value again only
// where the name pointer changes: not between lines of one list naming
// it in any case, but at the first line of the next section's list
// (testdata/corpus/147 on Apache).
func TestApplyEnvReread(t *testing.T) {
	one := serverEnv(t, "SetEnvIf X-Foo ^$ X-Foo=bar\nSetEnvIf x-foo bar hit")
	var env policy.Env
	ApplyEnv(one, &EnvInput{Dry: true}, &env)
	if _, ok := env.Get("hit"); ok {
		t.Error("one list: the value was read again")
	}
	cfg, err := loadConf(t, `<Directory "@DOCROOT@">
SetEnvIf X-Foo ^$ X-Foo=bar
</Directory>
<Directory "@DOCROOT@/d">
SetEnvIf x-foo bar hit
</Directory>`)
	if err != nil {
		t.Fatal(err)
	}
	merged := append(append([]*EnvRule(nil), cfg.Dirs[0].Conf.SetEnv...), cfg.Dirs[1].Conf.SetEnv...)
	env = policy.Env{}
	ApplyEnv(merged, &EnvInput{Dry: true}, &env)
	if _, ok := env.Get("hit"); !ok {
		t.Error("two sections: the value was not read again")
	}
}

// TestMergeFields: apr_table_compress with APR_OVERLAP_TABLES_MERGE.
func TestMergeFields(t *testing.T) {
	str := func(fs HeaderFields) string {
		var b []string
		for _, f := range fs {
			b = append(b, f.Name+"="+f.Value)
		}
		return strings.Join(b, "|")
	}
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"A", "1", "B", "2"}, "A=1|B=2"},
		{[]string{"A", "1", "B", "2", "a", "3"}, "A=1, 3|B=2"},
		{[]string{"b", "2", "A", "1", "B", "3", "a", "4"}, "b=2, 3|A=1, 4"},
		{[]string{"X-\xe4", "1", "x-\xc4", "2"}, "X-\xe4=1|x-\xc4=2"}, // ASCII case only
	}
	for _, tt := range tests {
		var fs []HeaderField
		for i := 0; i+1 < len(tt.in); i += 2 {
			fs = append(fs, HeaderField{tt.in[i], tt.in[i+1]})
		}
		if got := str(mergeFields(fs)); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.in, got, tt.want)
		}
	}
	// The map path, past 32 fields.
	var fs []HeaderField
	for i := 0; i < 40; i++ {
		fs = append(fs, HeaderField{"H" + string(rune('a'+i%20)), string(rune('0' + i/20))})
	}
	got := mergeFields(fs)
	if len(got) != 20 || got[0].Value != "0, 1" || got[19].Name != "Ht" {
		t.Errorf("40 fields: %d, first %q, last %q", len(got), got[0].Value, got[19].Name)
	}
}

// TestStrmatchFold: apr_strmatch without case folds ASCII letters only.
func TestStrmatchFold(t *testing.T) {
	tests := []struct {
		s, sub string
		want   bool
	}{
		{"Mozilla Googlebot", "googlebot", true},
		{"BOT", "bot", true},
		{"robot", "", true},
		{"", "a", false},
		{"\u212a", "k", false}, // the Kelvin sign is not K
		{"x\xc4y", "\xe4", false},
	}
	for _, tt := range tests {
		if got := strmatchFold(tt.s, tt.sub); got != tt.want {
			t.Errorf("strmatchFold(%q, %q) = %v", tt.s, tt.sub, got)
		}
	}
}

// TestHostnameLookupsBuild: the setting at server level, by section and
// by virtual host; Apache's message for a bad value; not in .htaccess.
func TestHostnameLookupsBuild(t *testing.T) {
	cfg, err := loadConf(t, `HostnameLookups On
<Directory "@DOCROOT@/d">
HostnameLookups double
</Directory>
<VirtualHost *:80>
ServerName v.example
HostnameLookups Off
</VirtualHost>
<VirtualHost *:80>
ServerName w.example
</VirtualHost>`)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Defaults.HostnameLookups; got != LookupsOn {
		t.Errorf("server: %d", got)
	}
	if got := cfg.Dirs[0].Conf.HostnameLookups; got != LookupsDouble {
		t.Errorf("directory: %d", got)
	}
	if got := cfg.VHosts[0].Config.Defaults.HostnameLookups; got != LookupsOff {
		t.Errorf("virtual host: %d", got)
	}
	if got := cfg.VHosts[1].Config.Defaults.HostnameLookups; got != LookupsOn {
		t.Errorf("virtual host inheriting: %d", got)
	}
	if _, err := loadConf(t, "HostnameLookups Sometimes\n"); err == nil || !strings.Contains(err.Error(), "legacy.conf:1: parameter must be 'on', 'off', or 'double'") {
		t.Errorf("bad value: %v", err)
	}
	if _, err := cfg.ParseHtaccess("/x/.htaccess", []byte("HostnameLookups On\n"), OrAll, 0, ""); err == nil {
		t.Error(".htaccess: accepted")
	}
}

// TestWantsRaw: the rules Go's form of a request may not answer.
func TestWantsRaw(t *testing.T) {
	tests := []struct {
		conf string
		want bool
	}{
		{"SetEnvIf User-Agent bot b", false},
		{"SetEnvIf Host ^www h", false},
		{"SetEnvIf ^X-Ro . r", true},
		{"SetEnvIfNoCase transfer-encoding chunked c", true},
		{"SetEnvIf Trailer . t", true},
		{"SetEnvIf Cache-Control no-cache c", true},
		{"SetEnvIf Remote_Host . r", false},
		{`<Directory "@DOCROOT@">
<Files "x">
SetEnvIf ^X- . x
</Files>
</Directory>`, true},
		{`<VirtualHost *:80>
SetEnvIf ^X- . x
</VirtualHost>`, true},
	}
	for _, tt := range tests {
		cfg, err := loadConf(t, tt.conf)
		if err != nil {
			t.Fatalf("%q: %v", tt.conf, err)
		}
		if got := cfg.EnvWantsRaw(); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.conf, got, tt.want)
		}
	}
}

// toLower is strings.ToLower: on every string of up to five bytes of
// letters of both cases, the bytes around them, and non-ASCII runes
// (the Kelvin sign lowers to "k"), and on longer ones with such a byte
// at each place of an eight-byte word.
func TestToLower(t *testing.T) {
	parts := []string{"a", "z", "A", "Z", "@", "[", "`", "{", "0", "\x80", "é", "\u212a", "\xff"}
	check := func(s string) {
		if got, want := toLower(s), strings.ToLower(s); got != want {
			t.Errorf("toLower(%q) = %q, want %q", s, got, want)
		}
	}
	var gen func(s string, n int)
	gen = func(s string, n int) {
		check(s)
		if n > 0 {
			for _, p := range parts {
				gen(s+p, n-1)
			}
		}
	}
	gen("", 4)
	base := "www.vh0.bench.example.org"
	for i := range len(base) {
		for _, p := range parts {
			check(base[:i] + p + base[i:])
		}
	}
}
