package walk

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// scanHost is the virtual host choice as server/vhost.c makes it, by
// scanning every host for every request: the model the index built at
// load must agree with.
func scanHost(e *Engine, hostHeader string, t int8) *Engine {
	if !e.sslHosts {
		t = tlsAny
	}
	portOK := func(a translate.VHostAddr) bool {
		return a.Port == 0 || e.localPort == 0 || a.Port == e.localPort
	}
	var set []hostEngine
	for _, wildcard := range []bool{false, true} {
		for _, h := range e.hosts {
			if t != tlsAny && (h.e.ssl != nil && h.e.ssl.engine) != (t == tlsYes) {
				continue
			}
			for _, a := range h.v.Addrs {
				if a.Wildcard == wildcard && (wildcard || e.localIP.IsValid() && a.IP == e.localIP) && portOK(a) {
					set = append(set, h)
					break
				}
			}
		}
		if len(set) > 0 {
			break
		}
	}
	if len(set) == 0 {
		return e
	}
	if !set[0].v.NameBased {
		return set[0].e
	}
	name, _ := fixHostname(hostHeader, false)
	if name != "" {
		for _, h := range set {
			if h.v.Name == name {
				return h.e
			}
			for _, a := range h.v.Aliases {
				if a == name || strings.ContainsAny(a, "*?[") && fnmatchFold(a, name) {
					return h.e
				}
			}
		}
	}
	return set[0].e
}

// testHosts makes an engine with the virtual hosts given, indexed, bound
// to ip and port.
func testHosts(ip netip.Addr, port int, vs ...*translate.VHost) *Engine {
	e := &Engine{}
	for _, v := range vs {
		h := &Engine{ssl: &sslState{}}
		e.hosts = append(e.hosts, hostEngine{v: v, e: h})
	}
	e.sslHosts = e.sslVHosts()
	e.SetLegacyAddress(ip, port)
	return e
}

// TestHostIndex: the host the index picks, against the cases that tell
// the order of the checks apart.
func TestHostIndex(t *testing.T) {
	any80 := []translate.VHostAddr{{Wildcard: true, Port: 80}}
	vh := func(name string, aliases ...string) *translate.VHost {
		return &translate.VHost{Addrs: any80, Name: name, Aliases: aliases, NameBased: true}
	}
	for _, tc := range []struct {
		name  string
		hosts []*translate.VHost
		host  string
		want  int // index of the host, -1 for the main server
	}{
		{"exact name", []*translate.VHost{vh("a.test"), vh("b.test")}, "b.test", 1},
		{"no match: the first", []*translate.VHost{vh("a.test"), vh("b.test")}, "c.test", 0},
		{"empty Host: the first", []*translate.VHost{vh("a.test"), vh("b.test")}, "", 0},
		{"exact alias", []*translate.VHost{vh("a.test"), vh("b.test", "c.test")}, "c.test", 1},
		{"an earlier wildcard before a later name", []*translate.VHost{vh("x.test", "*.a.test"), vh("www.a.test")}, "www.a.test", 0},
		{"an earlier name before a later wildcard", []*translate.VHost{vh("www.a.test"), vh("x.test", "*.a.test")}, "www.a.test", 0},
		{"a wildcard after an exact match is not asked", []*translate.VHost{vh("x.test"), vh("b.test"), vh("y.test", "*")}, "b.test", 1},
		{"the first of two exact names", []*translate.VHost{vh("a.test"), vh("b.test", "a.test")}, "a.test", 0},
		{"negated class", []*translate.VHost{vh("x.test"), vh("y.test", "[!a].test")}, "b.test", 1},
		{"case and port of the Host", []*translate.VHost{vh("x.test"), vh("a.test")}, "A.Test:80", 1},
		{"not name-based: the first", []*translate.VHost{{Addrs: any80, Name: "a.test"}, vh("b.test")}, "b.test", 0},
		{"port elsewhere: the main server", []*translate.VHost{{Addrs: []translate.VHostAddr{{Wildcard: true, Port: 8080}}, Name: "a.test", NameBased: true}}, "a.test", -1},
	} {
		e := testHosts(netip.Addr{}, 80, tc.hosts...)
		got := e.host(tc.host)
		want := e
		if tc.want >= 0 {
			want = e.hosts[tc.want].e
		}
		if got != want {
			t.Errorf("%s: Host %q picked %s, want %s", tc.name, tc.host, hostIndexName(e, got), hostIndexName(e, want))
		}
	}
}

func hostIndexName(e *Engine, h *Engine) string {
	for i, x := range e.hosts {
		if x.e == h {
			return fmt.Sprintf("host %d", i)
		}
	}
	return "the main server"
}

// TestHostIndexMatchesScan: over random sets of virtual hosts, addresses,
// TLS kinds and Host headers, the index picks what scanning every host
// picks.
func TestHostIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"", "a.test", "b.test", "www.a.test", "A.test", "c.test"}
	aliases := []string{"*.a.test", "?.test", "[ab].test", "[!a].test", "b.test", "www.a.test", "*", "c.test", "a.test"}
	addrs := []translate.VHostAddr{
		{Wildcard: true}, {Wildcard: true, Port: 80}, {Wildcard: true, Port: 443},
		{IP: netip.MustParseAddr("192.0.2.1")}, {IP: netip.MustParseAddr("192.0.2.1"), Port: 443},
		{IP: netip.MustParseAddr("192.0.2.2"), Port: 80},
	}
	locals := []struct {
		ip   netip.Addr
		port int
	}{{netip.Addr{}, 0}, {netip.Addr{}, 80}, {netip.MustParseAddr("192.0.2.1"), 443}, {netip.MustParseAddr("192.0.2.2"), 80}, {netip.MustParseAddr("192.0.2.9"), 80}}
	headers := []string{"", "a.test", "A.TEST", "a.test:80", "b.test", "www.a.test", "x.a.test", "c.test", "z.test", "d.test", "[::1]", "a.test."}
	for i := range 3000 {
		var vs []*translate.VHost
		ssl := make([]bool, 1+rng.IntN(8))
		for j := range ssl {
			v := &translate.VHost{Name: names[rng.IntN(len(names))], NameBased: rng.IntN(5) > 0}
			for range rng.IntN(4) {
				v.Aliases = append(v.Aliases, aliases[rng.IntN(len(aliases))])
			}
			for range 1 + rng.IntN(2) {
				v.Addrs = append(v.Addrs, addrs[rng.IntN(len(addrs))])
			}
			vs = append(vs, v)
			ssl[j] = rng.IntN(3) == 0
		}
		l := locals[rng.IntN(len(locals))]
		e := testHosts(l.ip, l.port, vs...)
		for j, on := range ssl {
			e.hosts[j].e.ssl.engine = on
		}
		e.sslHosts = e.sslVHosts()
		e.indexHosts()
		for _, hh := range headers {
			for _, kind := range []int8{tlsAny, tlsNo, tlsYes} {
				if got, want := e.hostTLS(hh, kind), scanHost(e, hh, kind); got != want {
					t.Fatalf("case %d, kind %d, Host %q: picked %s, scanning picks %s", i, kind, hh, hostIndexName(e, got), hostIndexName(e, want))
				}
			}
		}
	}
}

// BenchmarkHostPick: picking the virtual host of a request among 10 and
// 1,000 name-based hosts (the last one named, and one no host names).
func BenchmarkHostPick(b *testing.B) {
	for _, n := range []int{10, 1000} {
		var vs []*translate.VHost
		for i := range n {
			vs = append(vs, &translate.VHost{Addrs: []translate.VHostAddr{{Wildcard: true}}, Name: fmt.Sprintf("h%d.test", i),
				Aliases: []string{fmt.Sprintf("www.h%d.test", i)}, NameBased: true})
		}
		e := testHosts(netip.Addr{}, 80, vs...)
		for _, host := range []string{fmt.Sprintf("www.h%d.test", n-1), "nowhere.test"} {
			b.Run(fmt.Sprintf("%d/%s", n, host), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.host(host)
				}
			})
		}
	}
}
