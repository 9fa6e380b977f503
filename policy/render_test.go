package policy

import (
	"slices"
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
