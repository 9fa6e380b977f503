package policy

import (
	"net/netip"
	"strings"
	"testing"
)

// verifiedHost is a HostNamer with a fixed answer ("" for none).
type verifiedHost string

func (h verifiedHost) VerifiedHost() (string, bool) { return string(h), h != "" }

// accessLines builds the words of Allow or Deny lines, one Rule per line
// named prefix1, prefix2, ...: "all", "env=X", "env=!X", an address or
// subnet, or a host name; a line starting with "<GET>" or "<POST>" stands
// in that <Limit>.
func accessLines(t *testing.T, prefix string, lines []string) []AccessRule {
	t.Helper()
	var out []AccessRule
	for i, line := range lines {
		rule := &Rule{ID: prefix + string(rune('1'+i)), Text: line}
		methods := AllMethods
		words := strings.Fields(line)
		switch words[0] {
		case "<GET>":
			methods, words = 1<<MethodGet, words[1:]
		case "<POST>":
			methods, words = 1<<2, words[1:]
		}
		for _, w := range words {
			a := AccessRule{Methods: methods, Word: w, Rule: rule, Part: rule.NewPart(w)}
			switch {
			case w == "all":
				a.Kind = AccessAll
			case strings.HasPrefix(w, "env=!"):
				a.Kind, a.Name = AccessNotEnv, w[5:]
			case strings.HasPrefix(w, "env="):
				a.Kind, a.Name = AccessEnv, w[4:]
			default:
				addr, mask, has := cut(w)
				s, err := ParseSubnet(addr, mask, has)
				if err == ErrNotIP {
					a.Kind, a.Name = AccessHost, w
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", w, err)
				}
				a.Kind, a.Subnet = AccessIP, s
			}
			out = append(out, a)
		}
	}
	return out
}

// newCompat is one section's Order, Satisfy, Allow and Deny, compiled,
// with the Order directive named "order".
func newCompat(t *testing.T, o Order, s Satisfy, allows, denys []string) *Compat {
	t.Helper()
	c := &Compat{Allows: accessLines(t, "allow", allows), Denys: accessLines(t, "deny", denys)}
	order := &[MaxMethods]*Rule{}
	for m := range c.Order {
		c.Order[m], c.Satisfy[m], order[m] = o, s, &Rule{ID: "order"}
	}
	c.OrderRule = order
	c.Compile()
	return c
}

// TestCompatCheck: Order/Allow/Deny as check_dir_access decides it, with
// the directive that decided and the words that matched (find_allowdeny
// takes the first matching word of each list, in configuration order).
func TestCompatCheck(t *testing.T) {
	const post = 2
	for _, tc := range []struct {
		name   string
		order  Order
		allows []string
		denys  []string
		method int
		addr   string
		env    string // a variable set in the request
		host   string // the verified host name
		ok     bool
		rule   string // the deciding directive; "order" for the order's default
		hits   string // the words counted as matched
	}{
		{"deny,allow: nothing listed allows", DenyAllow, nil, nil, 0, "10.1.2.3", "", "", true, "order", ""},
		{"deny,allow: Allow overrides Deny", DenyAllow, []string{"10.0.0.0/8"}, []string{"all"}, 0, "10.1.2.3", "", "", true, "allow1", "allow1:10.0.0.0/8 deny1:all"},
		{"deny,allow: Deny alone denies", DenyAllow, []string{"10.0.0.0/8"}, []string{"all"}, 0, "8.8.8.8", "", "", false, "deny1", "deny1:all"},
		{"deny,allow: neither allows", DenyAllow, []string{"10.0.0.0/8"}, []string{"192.168.0.0/16"}, 0, "8.8.8.8", "", "", true, "order", ""},
		{"allow,deny: Deny overrides Allow", AllowDeny, []string{"all"}, []string{"10.0.0.0/8"}, 0, "10.1.2.3", "", "", false, "deny1", "allow1:all deny1:10.0.0.0/8"},
		{"allow,deny: Allow alone allows", AllowDeny, []string{"all"}, []string{"10.0.0.0/8"}, 0, "8.8.8.8", "", "", true, "allow1", "allow1:all"},
		{"allow,deny: neither denies", AllowDeny, []string{"10.0.0.0/8"}, []string{"192.168.0.0/16"}, 0, "8.8.8.8", "", "", false, "order", ""},
		{"mutual-failure: both denies", MutualFailure, []string{"10.0.0.0/8"}, []string{"10.1.0.0/16"}, 0, "10.1.2.3", "", "", false, "deny1", "allow1:10.0.0.0/8 deny1:10.1.0.0/16"},
		{"mutual-failure: Allow alone allows", MutualFailure, []string{"10.0.0.0/8"}, []string{"10.1.0.0/16"}, 0, "10.2.3.4", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"mutual-failure: Deny alone, not consulted", MutualFailure, []string{"10.0.0.0/8"}, []string{"all"}, 0, "8.8.8.8", "", "", false, "order", ""},
		{"the first matching line in order", AllowDeny, []string{"192.168.0.0/16", "10.1.0.0/16", "10.0.0.0/8"}, nil, 0, "10.1.2.3", "", "", true, "allow2", "allow2:10.1.0.0/16"},
		{"the first matching word of a line", AllowDeny, []string{"192.168.0.0/16 10.0.0.0/8 10.1.0.0/16"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"env before an address", AllowDeny, []string{"env=x", "10.0.0.0/8"}, nil, 0, "10.1.2.3", "X", "", true, "allow1", "allow1:env=x"},
		{"env unset: the address", AllowDeny, []string{"env=x", "10.0.0.0/8"}, nil, 0, "10.1.2.3", "", "", true, "allow2", "allow2:10.0.0.0/8"},
		{"an address before env", AllowDeny, []string{"10.0.0.0/8", "env=x"}, nil, 0, "10.1.2.3", "x", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"env after a failed address", AllowDeny, []string{"10.0.0.0/8", "env=x"}, nil, 0, "8.8.8.8", "x", "", true, "allow2", "allow2:env=x"},
		{"env words in order", AllowDeny, []string{"env=y", "env=x env=z"}, nil, 0, "8.8.8.8", "z", "", true, "allow2", "allow2:env=z"},
		{"all after an address", AllowDeny, []string{"10.0.0.0/8", "all"}, nil, 0, "8.8.8.8", "", "", true, "allow2", "allow2:all"},
		{"an address before all", AllowDeny, []string{"10.0.0.0/8", "all"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"all before an address", AllowDeny, []string{"all", "10.0.0.0/8"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:all"},
		{"the first all", AllowDeny, []string{"env=x", "all", "all"}, nil, 0, "10.1.2.3", "", "", true, "allow2", "allow2:all"},
		{"all twice: the first", AllowDeny, []string{"all", "all"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:all"},
		{"env=! unset matches", AllowDeny, []string{"env=!x"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:env=!x"},
		{"env=! set does not", AllowDeny, []string{"env=!x"}, nil, 0, "10.1.2.3", "x", "", false, "order", ""},
		{"host suffix", AllowDeny, []string{"example.org"}, nil, 0, "10.1.2.3", "", "www.example.org", true, "allow1", "allow1:example.org"},
		{"host on no label boundary", AllowDeny, []string{"example.org"}, nil, 0, "10.1.2.3", "", "badexample.org", false, "order", ""},
		{"host without a verified name", AllowDeny, []string{"example.org"}, nil, 0, "10.1.2.3", "", "", false, "order", ""},
		{"IPv4-mapped client", AllowDeny, []string{"10.0.0.0/8"}, nil, 0, "::ffff:10.1.2.3", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"non-contiguous mask", AllowDeny, []string{"10.0.0.0/255.0.255.0"}, nil, 0, "10.9.0.7", "", "", true, "allow1", "allow1:10.0.0.0/255.0.255.0"},
		{"non-contiguous mask after a prefix", AllowDeny, []string{"10.9.0.0/16", "10.0.0.0/255.0.255.0"}, nil, 0, "10.9.0.7", "", "", true, "allow1", "allow1:10.9.0.0/16"},
		{"non-contiguous mask before a prefix", AllowDeny, []string{"10.0.0.0/255.0.255.0", "10.9.0.0/16"}, nil, 0, "10.9.0.7", "", "", true, "allow1", "allow1:10.0.0.0/255.0.255.0"},
		{"two non-contiguous masks", AllowDeny, []string{"10.0.0.0/255.0.255.0", "10.9.0.7/255.255.0.255"}, nil, 0, "10.9.1.7", "", "", true, "allow2", "allow2:10.9.0.7/255.255.0.255"},
		{"one non-contiguous mask twice: the first", AllowDeny, []string{"10.0.0.0/255.0.255.0", "10.7.0.0/255.0.255.0"}, nil, 0, "10.9.0.7", "", "", true, "allow1", "allow1:10.0.0.0/255.0.255.0"},
		{"one non-contiguous mask, another subnet", AllowDeny, []string{"10.0.0.0/255.0.255.0", "10.0.1.0/255.0.255.0"}, nil, 0, "10.9.1.7", "", "", true, "allow2", "allow2:10.0.1.0/255.0.255.0"},
		{"a prefix repeated: the first", AllowDeny, []string{"10.0.0.0/8", "10.0.0.0/8"}, nil, 0, "10.9.1.7", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"an IPv6 client", AllowDeny, []string{"10.0.0.0/255.0.255.0", "2001:db8::/32"}, nil, 0, "2001:db8::1", "", "", true, "allow2", "allow2:2001:db8::/32"},
		{"<Limit GET>: GET", DenyAllow, []string{"<GET> all"}, []string{"all"}, 0, "10.1.2.3", "", "", true, "allow1", "allow1:all deny1:all"},
		{"<Limit GET>: POST", DenyAllow, []string{"<GET> all"}, []string{"all"}, post, "10.1.2.3", "", "", false, "deny1", "deny1:all"},
		{"<Limit POST> line skipped for GET", AllowDeny, []string{"<POST> 10.0.0.0/8", "10.1.0.0/16"}, nil, 0, "10.1.2.3", "", "", true, "allow2", "allow2:10.1.0.0/16"},
		{"a limited line before an unlimited one", AllowDeny, []string{"<GET> 10.0.0.0/8", "all"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"an unlimited all before a limited line", AllowDeny, []string{"all", "<GET> 10.0.0.0/8"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:all"},
		{"an unlimited address before a limited all", AllowDeny, []string{"10.0.0.0/8", "<GET> all"}, nil, 0, "10.1.2.3", "", "", true, "allow1", "allow1:10.0.0.0/8"},
		{"a limited env before an unlimited env", AllowDeny, []string{"<GET> env=x", "env=x"}, nil, 0, "10.1.2.3", "x", "", true, "allow1", "allow1:env=x"},
		{"an unlimited env before a limited one", AllowDeny, []string{"env=x", "<GET> env=x"}, nil, 0, "10.1.2.3", "x", "", true, "allow1", "allow1:env=x"},
		{"an unlimited address before a limited env", AllowDeny, []string{"10.0.0.0/8", "<GET> env=x"}, nil, 0, "10.1.2.3", "x", "", true, "allow1", "allow1:10.0.0.0/8"},
	} {
		c := newCompat(t, tc.order, SatisfyAll, tc.allows, tc.denys)
		r := &Request{Method: tc.method, Addr: netip.MustParseAddr(tc.addr), Now: 1}
		if tc.env != "" {
			r.Env.Set(tc.env, "1")
		}
		if tc.host != "" {
			r.Host = verifiedHost(tc.host)
		}
		ok, rule := c.Check(r, nil)
		if ok != tc.ok || rule == nil || rule.ID != tc.rule {
			t.Errorf("%s: %v %v, want %v %s", tc.name, ok, rule, tc.ok, tc.rule)
		}
		var hits []string
		for _, list := range [][]AccessRule{c.Allows, c.Denys} {
			seen := map[*Rule]bool{}
			for _, a := range list {
				if seen[a.Rule] {
					continue
				}
				seen[a.Rule] = true
				var n uint64
				for _, p := range a.Rule.Parts {
					if p.Matches() > 0 {
						hits = append(hits, a.Rule.ID+":"+p.Word)
					}
					n += p.Matches()
				}
				if m, _, _ := a.Rule.Stats(); m != n {
					t.Errorf("%s: %s matched %d times, its words %d", tc.name, a.Rule.ID, m, n)
				}
			}
		}
		if got := strings.Join(hits, " "); got != tc.hits {
			t.Errorf("%s: matched %q, want %q", tc.name, got, tc.hits)
		}
	}
}

// TestCheckWithoutOrderRule: when no directive decided and none named the
// order, Check names no rule, and Decide falls back to the scope's default.
func TestCheckWithoutOrderRule(t *testing.T) {
	c := &Compat{}
	c.Compile()
	if ok, rule := c.Check(&Request{Addr: netip.MustParseAddr("10.1.2.3")}, nil); !ok || rule != nil {
		t.Errorf("Check = %v %v, want true nil", ok, rule)
	}
	def := &Rule{ID: "def", Default: true}
	d := Decide(&Layers{Compat: c, Default: def}, &Request{Now: 1}, nil, nil)
	if d.Status != 0 || d.Rule != def || !d.Allowed() {
		t.Errorf("Decide = %d %v, want 0 def", d.Status, d.Rule)
	}
	if _, n, _ := def.Stats(); n != 1 {
		t.Errorf("default rule decided %d times, want 1", n)
	}
}

// recorder is a Tracer that keeps the events.
type recorder struct{ ev []Event }

func (r *recorder) Enabled() bool { return true }
func (r *recorder) Trace(e Event) { r.ev = append(r.ev, e) }
func (r *recorder) String() string {
	var b strings.Builder
	for _, e := range r.ev {
		id := "-"
		if e.Rule != nil {
			id = e.Rule.ID
		}
		b.WriteString(e.Text + "[" + id + "]=" + e.Result + "; ")
	}
	return b.String()
}

// TestCompatTrace: explain shows the lists in the order's order, each
// directive that applies to the method with the word that matched, and
// mutual-failure's Deny only when an Allow matched.
func TestCompatTrace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		order  Order
		allows []string
		denys  []string
		method int
		addr   string
		want   string
	}{
		{"deny,allow", DenyAllow, []string{"10.0.0.0/8 192.168.0.0/16", "8.8.8.8"}, []string{"all"}, 0, "192.168.1.1",
			"Order[order]=deny,allow; Deny[deny1]=match: all; Allow[allow1]=match: 192.168.0.0/16; Allow[allow2]=no match; Order/Allow/Deny[allow1]=granted; "},
		{"allow,deny", AllowDeny, []string{"10.0.0.0/8"}, nil, 0, "8.8.8.8",
			"Order[order]=allow,deny; Allow[allow1]=no match; Deny[-]=no Deny rules; Order/Allow/Deny[-]=denied; "},
		{"mutual-failure without an Allow", MutualFailure, []string{"10.0.0.0/8"}, []string{"all"}, 0, "8.8.8.8",
			"Order[order]=mutual-failure; Allow[allow1]=no match; Order/Allow/Deny[-]=denied; "},
		{"mutual-failure with an Allow", MutualFailure, []string{"10.0.0.0/8"}, []string{"all"}, 0, "10.1.2.3",
			"Order[order]=mutual-failure; Allow[allow1]=match: 10.0.0.0/8; Deny[deny1]=match: all; Order/Allow/Deny[deny1]=denied; "},
		{"a line of another method is not shown", DenyAllow, []string{"<POST> all", "<GET> 10.0.0.0/8"}, nil, 0, "10.1.2.3",
			"Order[order]=deny,allow; Deny[-]=no Deny rules; Allow[allow2]=match: 10.0.0.0/8; Order/Allow/Deny[allow2]=granted; "},
	} {
		c := newCompat(t, tc.order, SatisfyAll, tc.allows, tc.denys)
		var rec recorder
		c.Check(&Request{Method: tc.method, Addr: netip.MustParseAddr(tc.addr)}, &rec)
		if got := rec.String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestCompileListGroups: words of one mask share a group, whose first
// "all" is the lowest index.
func TestCompileListGroups(t *testing.T) {
	l := compileList(accessLines(t, "a", []string{"env=x all", "<GET> all", "all"}))
	if len(l.groups) != 2 || l.groups[0].all != 1 || l.groups[1].all != 2 || len(l.groups[0].others) != 1 {
		t.Errorf("groups %+v", l.groups)
	}
}
