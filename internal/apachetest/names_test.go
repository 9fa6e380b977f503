package apachetest

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestParseDNS(t *testing.T) {
	recs, err := ParseDNS("c.txtar", 10, []byte(`# comment
PTR 192.0.2.21 Liar.Example.TEST
a liar.example.test 192.0.2.99   # trailing comment

AAAA V6.example.test. 2001:db8::21
PTR 2001:db8::21 v6.example.test
DROP 192.0.2.70
DROP slow.example.test
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []DNSRecord{
		{"PTR", "21.2.0.192.in-addr.arpa.", "Liar.Example.TEST.", 11},
		{"A", "liar.example.test.", "192.0.2.99", 12},
		{"AAAA", "v6.example.test.", "2001:db8::21", 14},
		{"PTR", "1.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", "v6.example.test.", 15},
		{"DROP", "70.2.0.192.in-addr.arpa.", "", 16},
		{"DROP", "slow.example.test.", "", 17},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i := range want {
		if recs[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, recs[i], want[i])
		}
	}
	_, err = ParseDNS("c.txtar", 1, []byte("PTR www 1.2.3.4\nA x 2001:db8::1\nAAAA x 1.2.3.4\nMX a b\nA x\n"))
	if err == nil || strings.Count(err.Error(), "c.txtar:") != 5 {
		t.Errorf("error %v, want one for each of 5 lines", err)
	}
}

func TestHostRules(t *testing.T) {
	tests := []struct {
		conf string
		want bool
	}{
		{"Allow from all\nDeny from 10.1 192.168.0.0/16 10.1.2.3/255.0.0.0 2001:db8::/32 ::1 env=x env=!y", false},
		{"Allow from 127.0.0.1 localhost", true},
		{"deny FROM .example.test", true},
		{"Deny from badexample", true},
		{"Allow from 10.0.0.1 # office", false},
		{"Require ip 10.0.0.0/8\nRequire all granted", false},
		{"Require host example.test", true},
		{"Require not host bad.example.test", true},
		{"Require forward-dns a.example.test", true},
		{"HostnameLookups Off", false},
		{"HostnameLookups Double", true},
		{"# Allow from example.test is only a comment\n", false},
	}
	for _, tt := range tests {
		if got := hostRules([]byte(tt.conf)); got != tt.want {
			t.Errorf("hostRules(%q) = %v, want %v", tt.conf, got, tt.want)
		}
	}
}

func TestNameServer(t *testing.T) {
	s, err := StartNameServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := s.servers[0].PacketConn.LocalAddr().String()
	recs, err := ParseDNS("dns", 1, []byte("PTR 192.0.2.21 Liar.Example.TEST\nA liar.example.test 192.0.2.99\nDROP slow.example.test\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.SetRecords(recs)
	c := &dns.Client{Timeout: 300 * time.Millisecond}
	ask := func(name string, qtype uint16) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		r, _, err := c.Exchange(m, addr)
		return r, err
	}
	r, err := ask("21.2.0.192.in-addr.arpa.", dns.TypePTR)
	if err != nil || len(r.Answer) != 1 || r.Answer[0].(*dns.PTR).Ptr != "Liar.Example.TEST." {
		t.Errorf("PTR: %v %v", r, err)
	}
	r, err = ask("LIAR.example.test.", dns.TypeA)
	if err != nil || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "192.0.2.99" {
		t.Errorf("A: %v %v", r, err)
	}
	r, err = ask("liar.example.test.", dns.TypeAAAA)
	if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 {
		t.Errorf("AAAA (no data): %v %v", r, err)
	}
	r, err = ask("nobody.example.test.", dns.TypeA)
	if err != nil || r.Rcode != dns.RcodeNameError {
		t.Errorf("unknown name: %v %v", r, err)
	}
	if _, err = ask("slow.example.test.", dns.TypeA); err == nil {
		t.Errorf("DROP: answered")
	}
	if got := len(s.Asked()); got != 5 {
		t.Errorf("Asked() has %d questions, want 5: %q", got, s.Asked())
	}
}
