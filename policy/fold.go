package policy

// equalFold is strcasecmp's equality in the C locale, as APR tables
// (r->subprocess_env), in_domain and mod_authz_groupfile compare: ASCII
// letters match either case, every other byte only itself.
// strings.EqualFold also folds Unicode, so that the Kelvin sign (U+212A)
// equals "k" and the long s (U+017F) "s".
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
