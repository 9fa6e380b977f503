package proxy

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// FuzzClientAddr: X-Forwarded-For (one field per line of xff) is read as
// mod_remoteip reads it, and never panics: from an untrusted peer it is
// ignored; from a trusted one the client is the right-most entry that is
// not itself trusted (every entry to its right trusted), or the peer when
// there is no entry, and an entry that is not a plain address refuses the
// request instead of being guessed at.
func FuzzClientAddr(f *testing.F) {
	for _, s := range []string{"10.1.2.3", "8.8.8.8, 10.1.2.3", "10.1.2.3, 127.0.0.1", "10.1.2.3\n192.0.2.7", "unknown, 10.1.2.3",
		"10.1.2.3:4711", "[2001:db8::1]", "::ffff:10.1.2.3", "fe80::1%eth0", " , ,", ""} {
		f.Add("127.0.0.1:5000", s)
		f.Add("203.0.113.9:5000", s)
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.9.0.0/16"), netip.MustParsePrefix("2001:db8::/32")}
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		for _, v := range strings.Split(xff, "\n") {
			r.Header.Add("X-Forwarded-For", v)
		}
		got, fromHeader, ok := clientAddr(r, trusted)
		p := peerAddr(r)
		if !isTrusted(p, trusted) {
			if got != p || fromHeader || !ok {
				t.Fatalf("untrusted peer %q: got %v %v %v", peer, got, fromHeader, ok)
			}
			return
		}
		var hops []string
		for _, v := range strings.Split(xff, "\n") {
			for _, h := range strings.Split(v, ",") {
				if h = strings.TrimSpace(h); h != "" {
					hops = append(hops, h)
				}
			}
		}
		// Walk from the right as mod_remoteip does, by a second reading.
		want, wantFrom := p, false
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(hops[i])
			if err != nil {
				if ok {
					t.Fatalf("xff %q: entry %q is no address, yet the client is %v", xff, hops[i], got)
				}
				return
			}
			want, wantFrom = a.WithZone("").Unmap(), true
			if !isTrusted(want, trusted) {
				break
			}
		}
		if !ok || got != want || fromHeader != wantFrom {
			t.Fatalf("peer %q xff %q: got %v %v %v, want %v %v", peer, xff, got, fromHeader, ok, want, wantFrom)
		}
		if got.Is4In6() || got.Zone() != "" {
			t.Fatalf("client %v is not unmapped and without zone", got)
		}
	})
}
