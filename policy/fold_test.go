package policy

import "testing"

// TestEnvFoldsASCII: env names and domain suffixes compare as APR's
// tables and in_domain do, ASCII letters only.
func TestEnvFoldsASCII(t *testing.T) {
	var e Env
	e.Set("bad_bot", "1")
	if _, ok := e.Get("BAD_BOT"); !ok {
		t.Error("BAD_BOT not found")
	}
	e.Set("kiosk", "1")
	if _, ok := e.Get("\u212aiosk"); ok {
		t.Error("the Kelvin sign found kiosk")
	}
	if _, ok := e.Get("kio\u017fk"); ok {
		t.Error("the long s found kiosk")
	}
	if !InDomain("Example.ORG", "www.example.org") || InDomain("example.org", "www.example.or\u212a") {
		t.Error("InDomain does not fold ASCII only")
	}
}
