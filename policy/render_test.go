package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRenderLeaves renders a leaf of every provider, and containers, as
// Apache 2.4 lines.
func TestRenderLeaves(t *testing.T) {
	sub := func(addr, mask string) Subnet {
		t.Helper()
		s, err := ParseSubnet(addr, mask, mask != "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	leaf := func(p Provider, args ...string) *Node {
		return &Node{Kind: Leaf, Provider: p, Args: args, Methods: AllMethods}
	}
	get := builtinMethods["GET"]
	post := builtinMethods["POST"]
	tests := []struct {
		name string
		n    *Node
		want []string
	}{
		{"granted", leaf(ProvAllGranted), []string{"  Require all granted"}},
		{"denied", leaf(ProvAllDenied), []string{"  Require all denied"}},
		{"not local", &Node{Kind: Leaf, Provider: ProvLocal, Negate: true}, []string{"  Require not local"}},
		{"ip", &Node{Kind: Leaf, Provider: ProvIP, Subnets: []Subnet{sub("10.0.0.0", "8"), sub("192.168.1.1", ""), sub("2001:db8::", "32"), sub("10.1.2.0", "255.0.255.0")}},
			[]string{"  Require ip 10.0.0.0/8 192.168.1.1/32 2001:db8::/32 10.0.2.0/255.0.255.0"}},
		{"host", leaf(ProvHost, "example.org", ".example.net"), []string{"  Require host example.org .example.net"}},
		{"env", leaf(ProvEnv, "let_me_in"), []string{"  Require env let_me_in"}},
		{"user", leaf(ProvUser, "alice", "bob"), []string{"  Require user alice bob"}},
		{"valid-user", leaf(ProvValidUser), []string{"  Require valid-user"}},
		{"group", leaf(ProvGroup, "admins"), []string{"  Require group admins"}},
		{"other", leaf(ProvOther, "ldap-group", "cn=IT Staff,ou=groups"), []string{"  Require ldap-group cn=IT Staff,ou=groups"}},
		{"not other", &Node{Kind: Leaf, Provider: ProvOther, Negate: true, Args: []string{"dbm-group", "interns"}}, []string{"  Require not dbm-group interns"}},
		{"method", &Node{Kind: Leaf, Provider: ProvMethod, MethodOK: 1<<uint(get) | 1<<uint(post)}, []string{"  Require method GET POST"}},
		{"none", &Node{Kind: Any, Negate: true, Children: []*Node{leaf(ProvHost, "a"), leaf(ProvUser, "b")}},
			[]string{"  <RequireNone>", "      Require host a", "      Require user b", "  </RequireNone>"}},
	}
	for _, tt := range tests {
		if got := Render(tt.n, "  "); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRenderPacksIP: consecutive Require ip lines of a RequireAny (or
// RequireNone) share a line, at most 64 addresses a line; a negated one,
// another provider or a RequireAll keeps them apart, since "Require ip a
// b" means a or b.
func TestRenderPacksIP(t *testing.T) {
	ip := func(from, n int) *Node {
		l := &Node{Kind: Leaf, Provider: ProvIP, Methods: AllMethods}
		for i := from; i < from+n; i++ {
			s, err := ParseSubnet(fmt.Sprintf("10.0.0.%d", i), "", false)
			if err != nil {
				t.Fatal(err)
			}
			l.Subnets = append(l.Subnets, s)
		}
		return l
	}
	host := &Node{Kind: Leaf, Provider: ProvHost, Args: []string{"a"}, Methods: AllMethods}
	addrs := func(from, n int) string {
		var b strings.Builder
		b.WriteString("Require ip")
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, " 10.0.0.%d/32", i)
		}
		return b.String()
	}
	negated := ip(3, 1)
	negated.Negate = true
	for _, tc := range []struct {
		name string
		n    *Node
		want []string
	}{
		{"consecutive", anyOf(ip(1, 1), ip(2, 2), host, ip(4, 1)), []string{addrs(1, 3), "Require host a", addrs(4, 1)}},
		{"negated", anyOf(ip(1, 1), negated, ip(4, 1)), []string{addrs(1, 1), "Require not ip 10.0.0.3/32", addrs(4, 1)}},
		{"64 a line", anyOf(ip(0, 32), ip(32, 32)), []string{addrs(0, 64)}},
		{"65 are two lines", anyOf(ip(0, 32), ip(32, 33)), []string{addrs(0, 32), addrs(32, 33)}},
		{"a line counts every leaf on it", anyOf(ip(0, 30), ip(30, 30), ip(60, 10)), []string{addrs(0, 60), addrs(60, 10)}},
		{"more than 64 alone", anyOf(ip(0, 65), ip(65, 1), ip(66, 1)), []string{addrs(0, 65), addrs(65, 2)}},
		{"RequireAll", anyOf(allOf(ip(1, 1), ip(2, 1)), host), []string{"<RequireAll>", "    " + addrs(1, 1), "    " + addrs(2, 1), "</RequireAll>", "Require host a"}},
		{"RequireNone", anyOf(not(anyOf(ip(1, 1), ip(2, 1))), host), []string{"<RequireNone>", "    " + addrs(1, 2), "</RequireNone>", "Require host a"}},
		{"RequireAny in RequireAll", allOf(anyOf(ip(1, 1), ip(2, 1)), host), []string{"<RequireAll>", "    <RequireAny>", "        " + addrs(1, 2), "    </RequireAny>", "    Require host a", "</RequireAll>"}},
	} {
		if got := Render(tc.n, ""); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestRenderSimplifies: a container of one child is the child, nested
// containers of the same kind are one, and "Require all granted" in a
// RequireAll with another positive line adds nothing.
func TestRenderSimplifies(t *testing.T) {
	l := func(p Provider, args ...string) *Node {
		return &Node{Kind: Leaf, Provider: p, Args: args, Methods: AllMethods}
	}
	for _, tc := range []struct {
		name string
		n    *Node
		want []string
	}{
		{"nil", nil, nil},
		{"one child", anyOf(allOf(l(ProvHost, "a"))), []string{"Require host a"}},
		{"nested RequireAll", allOf(allOf(l(ProvHost, "a"), l(ProvUser, "b")), l(ProvEnv, "c")),
			[]string{"<RequireAll>", "    Require host a", "    Require user b", "    Require env c", "</RequireAll>"}},
		{"nested RequireAny", anyOf(anyOf(l(ProvHost, "a"), l(ProvUser, "b")), l(ProvEnv, "c")),
			[]string{"Require host a", "Require user b", "Require env c"}},
		{"nested RequireAny after a line", anyOf(l(ProvHost, "a"), anyOf(l(ProvUser, "b"), l(ProvEnv, "c")), l(ProvLocal)),
			[]string{"Require host a", "Require user b", "Require env c", "Require local"}},
		{"nested RequireAll after a line", allOf(l(ProvHost, "a"), allOf(l(ProvUser, "b"), l(ProvEnv, "c"))),
			[]string{"<RequireAll>", "    Require host a", "    Require user b", "    Require env c", "</RequireAll>"}},
		{"no child", allOf(), []string{"<RequireAll>", "</RequireAll>"}},
		{"nil children dropped", allOf(nil, l(ProvHost, "a"), nil, l(ProvUser, "b"), nil),
			[]string{"<RequireAll>", "    Require host a", "    Require user b", "</RequireAll>"}},
		{"all granted dropped after a line", allOf(l(ProvHost, "a"), l(ProvAllGranted), l(ProvUser, "b")),
			[]string{"<RequireAll>", "    Require host a", "    Require user b", "</RequireAll>"}},
		{"a RequireAll already simple", anyOf(allOf(l(ProvHost, "a"), l(ProvUser, "b")), l(ProvEnv, "c")),
			[]string{"<RequireAll>", "    Require host a", "    Require user b", "</RequireAll>", "Require env c"}},
		{"RequireNone in RequireAny stays", anyOf(not(anyOf(l(ProvHost, "a"), l(ProvUser, "b"))), l(ProvEnv, "c")),
			[]string{"<RequireNone>", "    Require host a", "    Require user b", "</RequireNone>", "Require env c"}},
		{"all granted dropped", anyOf(allOf(l(ProvAllGranted), l(ProvHost, "a"), l(ProvUser, "b"))),
			[]string{"<RequireAll>", "    Require host a", "    Require user b", "</RequireAll>"}},
		{"all granted dropped, one left", allOf(l(ProvAllGranted), l(ProvHost, "a")), []string{"Require host a"}},
		{"all granted kept beside a negation", allOf(l(ProvAllGranted), not(l(ProvHost, "a"))),
			[]string{"<RequireAll>", "    Require all granted", "    Require not host a", "</RequireAll>"}},
		{"all granted alone", allOf(l(ProvAllGranted)), []string{"Require all granted"}},
	} {
		if got := Render(tc.n, ""); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// Require arguments are written so that Apache reads the same words back
// (ap_getword_conf): a name with white space or a quote is quoted.
func TestRenderQuotesWords(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"alice", "bob"}, `Require user alice bob`},
		{[]string{"Alice Adams"}, `Require user "Alice Adams"`},
		{[]string{"tab\there"}, "Require user \"tab\there\""},
		{[]string{`say"hi`}, `Require user "say\"hi"`},
		{[]string{`'quoted`}, `Require user "'quoted"`},
		{[]string{`it's`}, `Require user it's`},
		{[]string{""}, `Require user ""`},
	} {
		if got := leafText("", leaf("u", ProvUser, tc.args...)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.args, got, tc.want)
		}
	}
	if got := leafText("", leaf("o", ProvOther, "ldap-group", `"cn=A B,ou=x"`)); got != `Require ldap-group "cn=A B,ou=x"` {
		t.Errorf("a raw line: %s", got)
	}
}
