package translate

// A slab hands out values of T carved from arrays of them, allocated a
// few at a time and more each time, up to limit: a configuration of
// thousands of sections allocates their parts in a few hundred arrays
// rather than one by one, and a small one allocates little more than
// it uses. Its values live as long as any of their array does (all of
// a model's live as long as the model).
type slab[T any] struct {
	free []T
	size int // of the last array
}

// grow gives the slab a new array with room for n values at least.
func (s *slab[T]) grow(n, limit int) {
	s.size = min(max(2*s.size, 4), limit)
	s.free = make([]T, max(s.size, n))
}

// new returns a new zero T.
func (s *slab[T]) new(limit int) *T {
	if len(s.free) == 0 {
		s.grow(1, limit)
	}
	v := &s.free[0]
	s.free = s.free[1:]
	return v
}

// list returns an empty list of T with room for n, capped there: an
// append past n allocates a list of its own.
func (s *slab[T]) list(n, limit int) []T {
	if n > len(s.free) {
		if n > limit/4 {
			return make([]T, 0, n) // too large to share an array
		}
		s.grow(n, limit)
	}
	l := s.free[:0:n]
	s.free = s.free[n:]
	return l
}
