package policy

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// necessityWorld is a random access configuration of one scope, as
// Layers and as the lines it is made of, so that a line can be deleted
// and the Layers built again.
type necessityWorld struct {
	order   [MaxMethods]Order
	satisfy [MaxMethods]Satisfy
	allows  [][]AccessRule // by line
	denys   [][]AccessRule
	tree    *Node // uncompiled; nil: no Require (2.4)
	req22   []Require22
	legacy  bool
	realm   string
	// 2.2: AuthzUserAuthoritative, AuthzGroupFileAuthoritative, and
	// whether AuthGroupFile is set (mod_authz_groupfile declines
	// without one).
	userAuth, groupAuth, groupFile bool
}

const methodPOST = 2

var necessityMasks = []MethodMask{AllMethods, AllMethods, AllMethods, 1 << MethodGet, 1 << methodPOST}

func randomWorld(rng *rand.Rand) *necessityWorld {
	w := &necessityWorld{legacy: rng.IntN(4) == 0, realm: "area", userAuth: rng.IntN(3) > 0, groupAuth: rng.IntN(3) > 0, groupFile: rng.IntN(3) > 0}
	for _, m := range []int{MethodGet, methodPOST} {
		w.order[m] = Order(rng.IntN(3))
		w.satisfy[m] = Satisfy(rng.IntN(3))
	}
	n := 0
	line := func(side string) []AccessRule {
		n++
		r := &Rule{ID: fmt.Sprintf("%s%d", side, n), Text: side}
		mask := necessityMasks[rng.IntN(len(necessityMasks))]
		var words []AccessRule
		for range 1 + rng.IntN(3) {
			a := AccessRule{Methods: mask, Rule: r}
			switch k := rng.IntN(10); {
			case k == 0:
				a.Kind, a.Word = AccessAll, "all"
			case k <= 6:
				a.Kind = AccessIP
				a.Word = [...]string{"10.0.0.0/8", "10.1.0.0/16", "10.1.1.1", "10.2.0.0/16", "10.1.0.0/255.255.0.255", "10.3.3.3"}[rng.IntN(6)]
				addr, mask, has := cut(a.Word)
				a.Subnet, _ = ParseSubnet(addr, mask, has)
			case k <= 8:
				a.Kind, a.Name, a.Word = AccessEnv, "x", "env=x"
			default:
				a.Kind, a.Name, a.Word = AccessNotEnv, "x", "env=!x"
			}
			words = append(words, a)
		}
		return words
	}
	for range rng.IntN(4) {
		w.allows = append(w.allows, line("allow"))
	}
	for range rng.IntN(4) {
		w.denys = append(w.denys, line("deny"))
	}
	// Some worlds are mostly Require ip lines for every method, which
	// Compile merges into one leaf.
	ipHeavy := rng.IntN(3) == 0
	leafOf := func() *Node {
		n++
		l := &Node{Kind: Leaf, Methods: necessityMasks[rng.IntN(len(necessityMasks))], Rule: &Rule{ID: fmt.Sprint("require", n)}}
		k := rng.IntN(8)
		if ipHeavy && rng.IntN(4) > 0 {
			k, l.Methods = 2, AllMethods
		}
		switch k {
		case 0:
			l.Provider = ProvAllGranted
		case 1:
			l.Provider = ProvAllDenied
		case 2, 3:
			l.Provider = ProvIP
			for _, s := range [][]string{{"10.1.0.0", "16"}, {"10.1.1.1", ""}, {"10.2.0.0", "16"}, {"10.0.0.0", "8"}}[rng.IntN(4):] {
				sn, _ := ParseSubnet(s[0], s[1], s[1] != "")
				l.Subnets = append(l.Subnets, sn)
				if rng.IntN(2) == 0 {
					break
				}
			}
		case 4:
			l.Provider, l.Args = ProvEnv, []string{"x"}
		case 5:
			l.Provider = ProvValidUser
		case 6:
			l.Provider, l.Args = ProvUser, []string{"alice"}
		default:
			l.Provider, l.Args = ProvGroup, []string{"staff"}
		}
		return l
	}
	if !w.legacy && rng.IntN(5) > 0 {
		root := &Node{Kind: Any}
		for range 1 + rng.IntN(4) {
			if rng.IntN(4) == 0 {
				// <RequireAll> with a positive line and maybe a negated one.
				all := &Node{Kind: All}
				all.Children = append(all.Children, leafOf())
				if rng.IntN(2) == 0 {
					neg := leafOf()
					neg.Negate = true
					all.Children = append(all.Children, neg)
				} else {
					all.Children = append(all.Children, leafOf())
				}
				root.Children = append(root.Children, all)
				continue
			}
			root.Children = append(root.Children, leafOf())
		}
		w.tree = root
	}
	if w.legacy {
		for range rng.IntN(3) {
			n++
			q := Require22{Methods: necessityMasks[rng.IntN(len(necessityMasks))], Rule: &Rule{ID: fmt.Sprint("q", n)}}
			q.Words = [][]string{{"valid-user"}, {"user", "alice"}, {"user", "bob"}, {"group", "staff"}}[rng.IntN(4)]
			w.req22 = append(w.req22, q)
		}
		for _, m := range []int{MethodGet, methodPOST} {
			w.satisfy[m] = Satisfy(1 + rng.IntN(2))
		}
	}
	return w
}

// withMasks sets each container's methods to its children's, as
// add_authz_provider does; false when a container is left empty, or
// with negated lines only, which Apache refuses to load.
func withMasks(n *Node) bool {
	if n.Kind == Leaf {
		return true
	}
	n.Methods = 0
	positive := false
	for _, c := range n.Children {
		if !withMasks(c) {
			return false
		}
		n.Methods |= c.Methods
		positive = positive || !c.Negate
	}
	return len(n.Children) > 0 && positive
}

// without copies a tree without the leaves of rule x.
func without(n *Node, x *Rule) *Node {
	if n == nil {
		return nil
	}
	if n.Kind == Leaf {
		if n.Rule == x {
			return nil
		}
		return n
	}
	c := *n
	c.Children = nil
	for _, ch := range n.Children {
		if k := without(ch, x); k != nil {
			c.Children = append(c.Children, k)
		}
	}
	return &c
}

// sameMasks reports whether every container of pruned, the tree orig
// without the leaves of rule x, applies to the methods its original did.
func sameMasks(orig, pruned *Node, x *Rule) bool {
	if orig.Methods != pruned.Methods {
		return false
	}
	j := 0
	for _, c := range orig.Children {
		if c.Kind == Leaf && c.Rule == x {
			continue
		}
		if c.Kind != Leaf && !sameMasks(c, pruned.Children[j], x) {
			return false
		}
		j++
	}
	return true
}

// layers builds the scope's Layers with rule x deleted (nil: none), and
// reports whether deleting x is structural: its section would then
// inherit a layer, or its tree's containers would change.
func (w *necessityWorld) layers(x *Rule) (*Layers, bool) {
	c := &Compat{Order: w.order, Satisfy: w.satisfy}
	lines := 0
	for _, side := range []struct {
		lines [][]AccessRule
		out   *[]AccessRule
	}{{w.allows, &c.Allows}, {w.denys, &c.Denys}} {
		for _, words := range side.lines {
			if words[0].Rule == x {
				continue
			}
			lines++
			*side.out = append(*side.out, words...)
		}
	}
	structural := x != nil && lines == 0 && len(w.allows)+len(w.denys) == 1 // the section's only access line
	c.Compile()
	l := &Layers{Compat: c, Default: &Rule{ID: "default", Default: true}, AuthType: "Basic", AuthName: w.realm, HasAuthName: true, UserFile: "users", GroupFile: "groups"}
	if w.legacy && !w.groupFile {
		l.GroupFile = ""
	}
	if w.tree != nil {
		t := without(w.tree, x)
		if !withMasks(t) {
			structural = true // emptied, or only negated lines left
		} else if x != nil && !sameMasks(w.tree, t, x) {
			structural = true
		}
		l.Authz = t.Compile()
	}
	if w.legacy {
		lg := &Legacy22{Satisfy: w.satisfy, UserAuthoritative: w.userAuth, GroupAuthoritative: w.groupAuth}
		for _, q := range w.req22 {
			if q.Rule != x {
				lg.Requires = append(lg.Requires, q)
			}
		}
		if x != nil && len(w.req22) > 0 && len(lg.Requires) == 0 {
			structural = true
		}
		l.Legacy = lg
	}
	return l, structural
}

func (w *necessityWorld) rules() []*Rule {
	var out []*Rule
	for _, words := range append(append([][]AccessRule(nil), w.allows...), w.denys...) {
		out = append(out, words[0].Rule)
	}
	w.tree.Rules(func(r *Rule) { out = append(out, r) })
	for _, q := range w.req22 {
		out = append(out, q.Rule)
	}
	return out
}

// TestNecessityMatchesDeletion: over random scopes (Order, Satisfy and
// <Limit> per method, Allow and Deny lines of several words, Require
// trees with <RequireAll> and negations, 2.2's Require lines, Basic
// authentication) and requests, the rules a decision counts necessary
// are exactly those whose deletion, the Layers built again without the
// line, changes the answer; structural lines are never counted.
func TestNecessityMatchesDeletion(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	addrs := []string{"10.1.1.1", "10.1.2.3", "10.2.0.9", "10.3.3.3", "192.0.2.1"}
	creds := []Credentials{{}, alice, aliceBad, carol, {Present: true, Basic: true, User: "bob", Password: "builder"}}
	id := fakeIdentity{passwords: testID.passwords, groups: map[string][]string{"alice": {"staff"}, "bob": {"guests"}}}
	checked, necessary, ipNeeded := 0, 0, 0
	for world := 0; world < 400; world++ {
		w := randomWorld(rng)
		if w.tree != nil && !withMasks(w.tree) {
			continue
		}
		rules := w.rules()
		for _, x := range rules {
			_, x.Structural = w.layers(x)
		}
		full, _ := w.layers(nil)
		for q := 0; q < 12; q++ {
			r := &Request{Method: []int{MethodGet, methodPOST}[rng.IntN(2)], Addr: netip.MustParseAddr(addrs[rng.IntN(len(addrs))]),
				URI: "/x", Auth: creds[rng.IntN(len(creds))]}
			if rng.IntN(2) == 0 {
				r.Env.Set("x", "1")
			}
			before := map[*Rule]uint64{}
			for _, x := range rules {
				before[x] = x.Necessary()
			}
			d := Decide(full, r, id, nil)
			if r.Dry {
				t.Fatal("Decide left the request dry")
			}
			for _, x := range rules {
				got := x.Necessary() - before[x]
				want := uint64(0)
				if !x.Structural {
					alt, _ := w.layers(x)
					dr := *r
					dr.Dry = true
					if a := Decide(alt, &dr, id, nil); a.answers() != d.answers() {
						want = 1
					}
				}
				checked++
				if got != want {
					t.Fatalf("world %d, %s %s from %s with %+v, env x %v: rule %s (%s) counted necessary %d times, want %d (answer %d %q)\nworld: %+v",
						world, []string{"GET", "", "POST"}[r.Method], r.URI, r.Addr, r.Auth, r.Env.kv != nil, x.ID, x.Text, got, want, d.Status, d.Realm, w)
				}
				necessary += int(want)
				if want == 1 && x.Text == "" && len(x.ID) > 7 && x.ID[:7] == "require" {
					ipNeeded++
				}
			}
		}
	}
	t.Logf("%d rule-request pairs checked, %d necessary (%d Require lines)", checked, necessary, ipNeeded)
	if necessary == 0 || necessary == checked {
		t.Fatalf("the worlds are degenerate: %d of %d necessary", necessary, checked)
	}
}

// TestNecessity: hand-picked cases, each with the rules its decision
// needs.
func TestNecessity(t *testing.T) {
	rule := func(id string) *Rule { return &Rule{ID: id, Text: id} }
	denyAll, denyNet, allowNet, allowOther := rule("deny all"), rule("deny 10/8"), rule("allow 10.1/16"), rule("allow 192.0.2.1")
	words := func(r *Rule, subnets ...string) []AccessRule {
		var out []AccessRule
		for _, w := range subnets {
			a := AccessRule{Kind: AccessAll, Methods: AllMethods, Word: w, Rule: r}
			if w != "all" {
				addr, mask, has := cut(w)
				a.Kind = AccessIP
				a.Subnet, _ = ParseSubnet(addr, mask, has)
			}
			out = append(out, a)
		}
		return out
	}
	compat := func(o Order, s Satisfy, allows, denys []AccessRule) *Compat {
		c := &Compat{Allows: allows, Denys: denys}
		for m := range MaxMethods {
			c.Order[m], c.Satisfy[m] = o, s
		}
		c.Compile()
		return c
	}
	valid := leaf("valid-user", ProvValidUser)
	getOnly := limit(1<<MethodGet, leaf("GET only", ProvAllGranted))
	notX := not(leaf("not env x", ProvEnv, "x"))
	cases := []struct {
		name string
		l    *Layers
		r    Request
		want []string
	}{
		{
			// The demo's case: in a Satisfy Any section, Deny from all is
			// what makes a stranger authenticate.
			name: "Satisfy Any: the Deny that sends strangers to the password",
			l:    &Layers{Compat: compat(DenyAllow, SatisfyAny, words(allowNet, "10.1.0.0/16"), words(denyAll, "all")), Authz: anyOf(valid, leaf("other", ProvAllDenied)).Compile(), AuthType: "Basic", AuthName: "members", HasAuthName: true, UserFile: "u"},
			r:    Request{Addr: netip.MustParseAddr("203.0.113.5"), URI: "/members/"},
			want: []string{"deny all", "valid-user"},
		},
		{
			name: "two Deny lines that both match: neither alone",
			l:    &Layers{Compat: compat(DenyAllow, SatisfyAll, words(allowOther, "192.0.2.1"), append(words(denyAll, "all"), words(denyNet, "10.0.0.0/8")...))},
			r:    Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/"},
		},
		{
			name: "an Allow that overrides Deny from all",
			l:    &Layers{Compat: compat(DenyAllow, SatisfyAll, words(allowNet, "10.1.0.0/16"), words(denyAll, "all"))},
			r:    Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/"},
			want: []string{"allow 10.1/16"},
		},
		{
			name: "a line of two words, both matching: the line",
			l:    &Layers{Compat: compat(AllowDeny, SatisfyAll, words(allowNet, "10.1.0.0/16", "10.0.0.0/8"), nil)},
			r:    Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/"},
			want: []string{"allow 10.1/16"},
		},
		{
			// <RequireAll> of a GET-only line and a negated one: for POST
			// the GET-only line grants, and the negated one is neutral.
			name: "a line of another method granting in <RequireAll>",
			l:    &Layers{Compat: compat(DenyAllow, SatisfyAll, nil, nil), Authz: anyOf(&Node{Kind: All, Methods: AllMethods, Children: []*Node{getOnly, notX}}).Compile()},
			r:    Request{Method: methodPOST, Addr: netip.MustParseAddr("10.1.1.1"), URI: "/"},
			want: []string{"GET only"},
		},
		{
			// Past eight answering Require lines the rest are counted
			// without a check: a count too many, never one too few.
			name: "over eight answering Require lines",
			l: &Layers{Compat: compat(DenyAllow, SatisfyAll, nil, nil), Authz: anyOf(leaf("r1", ProvEnv, "x1"), leaf("r2", ProvEnv, "x2"), leaf("r3", ProvEnv, "x3"),
				leaf("r4", ProvEnv, "x4"), leaf("r5", ProvEnv, "x5"), leaf("r6", ProvEnv, "x6"), leaf("r7", ProvEnv, "x7"), leaf("r8", ProvEnv, "x8"),
				leaf("r9", ProvEnv, "x9"), leaf("r10", ProvEnv, "x10")).Compile()},
			r:    Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/"},
			want: []string{"r9", "r10"},
		},
		{
			name: "over eight 2.2 Require lines",
			l: &Layers{Compat: compat(DenyAllow, SatisfyAll, nil, nil), AuthType: "Basic", AuthName: "a", HasAuthName: true, UserFile: "u",
				Legacy: &Legacy22{UserAuthoritative: true, Requires: requires22("user u1", "user u2", "user u3", "user u4", "user u5", "user u6", "user u7", "user u8", "user u9", "user u10")}},
			r:    Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/", Auth: alice},
			want: []string{"q9", "q:"},
		},
		{
			name: "a dry decision needs nothing",
			l:    &Layers{Compat: compat(DenyAllow, SatisfyAll, words(allowNet, "10.1.0.0/16"), words(denyAll, "all"))},
			r:    Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/", Dry: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.l, &c.r, testID, nil)
			var got []string
			for _, n := range d.Necessary() {
				got = append(got, n.Rule.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("necessary %q, want %q (status %d)", got, c.want, d.Status)
			}
		})
	}
}

// TestAnswers: what the client sees of a decision is its status, and the
// realm only of a challenge (a 401's WWW-Authenticate): a rule whose
// removal changes only the realm of a 401 is necessary, a realm carried
// by any other answer is not seen.
func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		d    Decision
		want answer
	}{
		{Decision{Status: 401, Realm: "staff"}, answer{401, "staff"}},
		{Decision{Status: 401}, answer{status: 401}},
		{Decision{Status: 403, Realm: "staff"}, answer{status: 403}},
		{Decision{Status: 200, Realm: "staff"}, answer{status: 200}},
	} {
		if got := tc.d.answers(); got != tc.want {
			t.Errorf("answers of %d with realm %q: %+v, want %+v", tc.d.Status, tc.d.Realm, got, tc.want)
		}
	}
}
