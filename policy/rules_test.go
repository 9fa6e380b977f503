package policy

import (
	"slices"
	"testing"
)

// TestNodeRules: Rules lists every leaf's rule in the tree's order, through
// nested containers, skipping leaves without a rule (a synthetic leaf) and
// a nil tree. Metrics and translate read a tree's rules through it.
func TestNodeRules(t *testing.T) {
	rule := func(id string) *Rule { return &Rule{ID: id} }
	tree := &Node{Kind: All, Children: []*Node{
		{Kind: Leaf, Rule: rule("a")},
		{Kind: Any, Children: []*Node{
			{Kind: Leaf, Rule: rule("b")},
			{Kind: Leaf},
			{Kind: All, Children: []*Node{{Kind: Leaf, Rule: rule("c")}}},
		}},
		{Kind: Leaf, Rule: rule("d")},
	}}
	for _, c := range []struct {
		n    *Node
		want []string
	}{
		{tree, []string{"a", "b", "c", "d"}},
		{tree.Children[1], []string{"b", "c"}},
		{&Node{Kind: Leaf, Rule: rule("x")}, []string{"x"}},
		{&Node{Kind: Leaf}, nil},
		{&Node{Kind: Any}, nil},
		{nil, nil},
	} {
		var got []string
		c.n.Rules(func(r *Rule) { got = append(got, r.ID) })
		if !slices.Equal(got, c.want) {
			t.Errorf("Rules = %v, want %v", got, c.want)
		}
	}
}
