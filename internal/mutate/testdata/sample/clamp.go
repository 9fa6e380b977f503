// Package sample is the mutate package's test fixture: a function whose
// test kills some mutants and not others.
package sample

// Clamp returns v limited to [lo, hi].
func Clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// Join concatenates; "-" does not compile on strings.
func Join(a, b string) string { return a + b }

// Untested is out of scope.
func Untested(n int) int { return -n }
