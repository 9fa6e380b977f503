package ldapauth

import "testing"

// libldapRefuses: the filters libldap refuses and go-ldap reads: a
// filter opening with a second parenthesis, wherever a filter starts.
func TestLibldapRefuses(t *testing.T) {
	for f, want := range map[string]bool{
		"(uid=bob)":                          false,
		"(&(departmentNumber=7)(uid=bob))":   false,
		"(&((departmentNumber=7))(uid=bob))": true,
		"((a=b))":                            true,
		"( (a=b))":                           true,
		"(&(|(a=b)(c=d))(uid=x))":            false,
		"(&(|(a=b)((c=d)))(uid=x))":          true,
		"(!((a=b)))":                         true,
		"(&(!(a=b))(uid=x))":                 false,
		"(&(cn=a\\(b)(uid=x))":               false,
		"(&(cn=a(b)c)(uid=x))":               false,
		"(&(cn=a(b)c)((uid=x)))":             true,
		"(&(cn=a\\29(b)(uid=x))":             false,
		"":                                   false,
		"uid=x":                              false,
		"(&(a=b)":                            false,
		"(&(&(cell=*)(department=marketing))(uid=bob))": false,
	} {
		if got := libldapRefuses(f); got != want {
			t.Errorf("libldapRefuses(%q) = %v, want %v", f, got, want)
		}
	}
}
