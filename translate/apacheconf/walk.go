package apacheconf

import "errors"

// SkipBlock is used as a return value from the function passed to [Walk] to
// say that the contents of the section it was called with are to be skipped.
// It is not returned as an error by Walk.
var SkipBlock = errors.New("skip this block")

// Walk calls fn for every directive of ds in pre-order, depth first, with
// its enclosing sections, outermost first. The parents slice is valid only
// during the call. If fn returns [SkipBlock], Walk does not descend into the
// section; if it returns any other error, Walk stops and returns it.
func Walk(ds []*Directive, fn func(d *Directive, parents []*Directive) error) error {
	var parents []*Directive
	return walk(ds, &parents, fn)
}

func walk(ds []*Directive, parents *[]*Directive, fn func(*Directive, []*Directive) error) error {
	for _, d := range ds {
		n := len(*parents)
		err := fn(d, (*parents)[:n:n])
		if err == SkipBlock {
			continue
		}
		if err != nil {
			return err
		}
		if len(d.Block) == 0 {
			continue
		}
		*parents = append(*parents, d)
		err = walk(d.Block, parents, fn)
		*parents = (*parents)[:n]
		if err != nil {
			return err
		}
	}
	return nil
}
