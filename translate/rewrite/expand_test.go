package rewrite

import (
	"regexp"
	"testing"
)

func refs(pattern, subject string) Backrefs {
	return Backrefs{Source: subject, Index: regexp.MustCompile(pattern).FindStringSubmatchIndex(subject)}
}

// Expand is do_expand: one pass, nothing expanded twice, captures,
// variables, maps with defaults, escapes, and where a "?" came from.
func TestExpand(t *testing.T) {
	l := Lookups{
		Var: func(n string) string {
			return map[string]string{"HTTP_HOST": "www.example.com", "QUERY_STRING": "a=1", "EVIL": "$1%{HTTP_HOST}", "Q": "x?y", "QF": "?first"}[n]
		},
		Map: func(name, key string) (string, bool) {
			v, ok := map[string]string{"lc:ABC": "abc", "m:empty": "", "m:a?b": "found"}[name+":"+key]
			return v, ok
		},
	}
	rr := refs(`^/(\w+)/(\d*)(x)?`, "/blog/")
	rc := refs(`^(www)\.(.*)$`, "www.example.com")
	for _, tt := range []struct {
		in, want string
		rule     *Rule
		q        Qmark
	}{
		{in: "/index.php", want: "/index.php", q: QmarkNone},
		{in: "/a/$1", want: "/a/blog", q: QmarkNone},
		{in: "/$2/$3/$9", want: "///", q: QmarkNone}, // empty and unmatched groups give nothing
		{in: "%1-%2", want: "www-example.com", q: QmarkNone},
		{in: "%{HTTP_HOST}/x", want: "www.example.com/x", q: QmarkNone},
		{in: "%{NOPE}", want: "", q: QmarkNone},
		{in: "%{Q}", want: "x?y", q: QmarkUnsafe},
		{in: "%{QF}", want: "?first", q: QmarkUnsafe},
		{in: "?lit", want: "?lit", q: QmarkSafe},
		{in: "%{}", want: "", q: QmarkNone},
		{in: "%{X", want: "%{X", q: QmarkNone},
		{in: "%ab}", want: "%ab}", q: QmarkNone},
		{in: "${x}/", want: "${x}/", q: QmarkNone},
		{in: "${lc:x|}", want: "", q: QmarkNone},
		{in: "${lc:ABC|b|c}", want: "abc", q: QmarkNone},
		{in: "${lc:x|b|c}", want: "b|c", q: QmarkNone},
		{in: "<$0>", want: "</blog/>", q: QmarkNone},
		{in: "<%0>", want: "<www.example.com>", q: QmarkNone},
		{in: "%{EVIL}", want: "$1%{HTTP_HOST}", q: QmarkNone}, // not expanded again
		{in: "${lc:ABC}", want: "abc", q: QmarkNone},
		{in: "${lc:x|def}", want: "def", q: QmarkNone},
		{in: "${lc:x|$1}", want: "blog", q: QmarkNone},
		{in: "${m:empty|def}", want: "", q: QmarkNone}, // found, empty: no default
		{in: "${lc:x}", want: "", q: QmarkNone},
		{in: "${lc}", want: "${lc}", q: QmarkNone}, // no key: as written
		{in: "${lc:x", want: "${lc:x", q: QmarkNone},
		{in: "%{HTTP_HOST", want: "%{HTTP_HOST", q: QmarkNone},
		{in: "${m:${lc:ABC}|{d}}", want: "{d}", q: QmarkNone},
		{in: `\$1\%1\\`, want: `$1%1\`, q: QmarkNone},
		{in: `a\`, want: `a\`, q: QmarkNone},
		{in: "$", want: "$", q: QmarkNone},
		{in: "100%", want: "100%", q: QmarkNone},
		{in: "/p?$1", want: "/p?blog", q: QmarkSafe},
		{in: "/p%{Q}", want: "/px?y", q: QmarkUnsafe},
		{in: "/p%{Q}?z", want: "/px?y?z", q: QmarkUnsafe},
		{in: "/p%{Q}?z", want: "/px?y?z", q: QmarkSafe, rule: &Rule{Flags: FlagQSLast}},
		{in: `/p\?`, want: "/p?", q: QmarkNone},
		{in: "${m:a?b}", want: "found", q: QmarkNone},
		{in: "/$1", want: "/blog", q: QmarkNone, rule: &Rule{Flags: FlagEscapeBackref}},
	} {
		rule := tt.rule
		got, q := Expand(tt.in, rr, rc, rule, l)
		if got != tt.want || q != tt.q {
			t.Errorf("%q: %q (qmark %d), want %q (%d)", tt.in, got, q, tt.want, tt.q)
		}
	}
	// [B] escapes the captures only.
	sp := refs(`^(.*)$`, "a b&c/d")
	if got, _ := Expand("/s?q=$1&r=%{QUERY_STRING}", sp, Backrefs{}, &Rule{Flags: FlagEscapeBackref}, l); got != "/s?q=a+b%26c%2fd&r=a=1" {
		t.Errorf("[B]: %q", got)
	}
	if got, _ := Expand("$1", Backrefs{}, Backrefs{}, nil, Lookups{}); got != "" {
		t.Errorf("no match to refer to: %q", got)
	}
}

func TestEscapeBackref(t *testing.T) {
	for _, tt := range []struct {
		in, escapes, noEscapes string
		flags                  RuleFlag
		want                   string
	}{
		{"a b/c_d.e", "", "", 0, "a+b%2fc_d%2ee"},
		{"a b", "", "", FlagEscapeNoPlus, "a%20b"},
		{"a b/c?", "?", "", 0, "a b/c%3f"},
		{"a b/c?", "", "/", 0, "a+b/c%3f"},
		{"a b/c\x01\x7f\xe9", "", "", FlagEscapeCTLs, "a+b/c%01%7f\xe9"},
		{"a b/c?", "/", "/", 0, "a b/c?"},
		{"a\x00b", "", "", 0, "a"},
		{"/09:@AZ[`az{", "", "", 0, "%2f09%3a%40AZ%5b%60az%7b"},
		{"\x1f \x21", "", "", FlagEscapeCTLs, "%1f+!"},
	} {
		if got := EscapeBackref(tt.in, tt.escapes, tt.noEscapes, tt.flags); got != tt.want {
			t.Errorf("%q (B=%q BNE=%q %b): %q, want %q", tt.in, tt.escapes, tt.noEscapes, tt.flags, got, tt.want)
		}
	}
}
