package proxy

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startDNS runs a DNS server on loopback that knows a few names: a
// verified one, one whose forward lookup does not give the address back,
// an address with no PTR, and one that never answers.
func startDNS(t *testing.T) string {
	t.Helper()
	ptr := map[string]string{
		"4.3.2.10.in-addr.arpa.": "Good.Example.ORG.",
		"5.3.2.10.in-addr.arpa.": "liar.example.org.",
	}
	a := map[string]string{
		"good.example.org.": "10.2.3.4",
		"liar.example.org.": "10.9.9.9",
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		q := r.Question[0]
		if q.Name == "7.3.2.10.in-addr.arpa." {
			return // never answers: the lookup times out
		}
		m := new(dns.Msg)
		m.SetReply(r)
		name := dns.CanonicalName(q.Name)
		switch q.Qtype {
		case dns.TypePTR:
			if v, ok := ptr[name]; ok {
				m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60}, Ptr: v})
			} else {
				m.Rcode = dns.RcodeNameError
			}
		case dns.TypeA:
			if v, ok := a[name]; ok {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(v)})
			}
		}
		w.WriteMsg(m)
	})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: h}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

func TestResolverDoubleReverse(t *testing.T) {
	r := NewResolver(startDNS(t), 300*time.Millisecond)
	tests := []struct {
		ip   string
		name string
		ok   bool
	}{
		{"10.2.3.4", "good.example.org", true},        // PTR and A agree; lowercased
		{"::ffff:10.2.3.4", "good.example.org", true}, // v4-mapped is the IPv4 address
		{"10.2.3.5", "", false},                       // forward lookup does not give it back
		{"10.2.3.6", "", false},                       // no PTR
		{"10.2.3.7", "", false},                       // timeout
	}
	for _, tt := range tests {
		name, ok := r.Verified(netip.MustParseAddr(tt.ip))
		if name != tt.name || ok != tt.ok {
			t.Errorf("Verified(%s) = %q, %v; want %q, %v", tt.ip, name, ok, tt.name, tt.ok)
		}
	}
}

// The hosts file comes first and its names are taken as written, a final
// dot included (which then matches no domain rule, as with glibc).
func TestResolverHostsFile(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	os.WriteFile(hosts, []byte("# test\n192.0.2.1 Web.Example.TEST web\n192.0.2.2 dotted.example.test.\n192.0.2.3 liar.example.test\n192.0.2.9 liar.example.test\n"), 0o644)
	r := NewResolver("", time.Second)
	r.hostsPath = hosts
	r.r = nil // no DNS: every answer must come from the file
	for _, tt := range []struct {
		ip, name string
		ok       bool
	}{
		{"192.0.2.1", "web.example.test", true},
		{"192.0.2.2", "dotted.example.test.", true},
		{"192.0.2.3", "liar.example.test", true},
	} {
		name, ok := r.Verified(netip.MustParseAddr(tt.ip))
		if name != tt.name || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.ip, name, ok, tt.name, tt.ok)
		}
	}
}
