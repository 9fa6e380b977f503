package apachetest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/miekg/dns"
)

// Host names. A case that looks up client host names (Allow from
// www.example.test, Require host ...) runs with a private name service: its
// own /etc/hosts and a DNS server on 127.0.0.1:53, inside a mount and
// network namespace of its own in which loopback is the only interface, so
// that no lookup can leave the machine (testdata/corpus/README.md, "Host
// names"). Apache (through glibc: nsswitch "files dns") and orderly
// (through Go's resolver, which reads the same three files) both use it.

// Names of a case's name-service files.
const (
	HostsFile = "hosts"
	DNSFile   = "dns"
)

// DefaultHosts is the private /etc/hosts of a case that has no hosts file:
// 127.0.0.1 is localhost and ::1 has no name, as on the machine where the
// first cases were written (029-blocklist-and-overrides relies on it).
const DefaultHosts = "127.0.0.1 localhost\n"

// ResolvConf is the private /etc/resolv.conf: the DNS server of the case on
// loopback, and a lookup that gets no answer gives up after one second.
const ResolvConf = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"

// A DNSRecord is one line of a case's dns file:
//
//	PTR  ADDRESS NAME   the reverse name of ADDRESS points to NAME (as written)
//	A    NAME ADDRESS   an IPv4 address of NAME
//	AAAA NAME ADDRESS   an IPv6 address of NAME
//	DROP ADDRESS|NAME   queries for the reverse name of ADDRESS, or for NAME,
//	                    are never answered (the lookup times out)
//
// A name that has no record gets NXDOMAIN; a name that has records, but not
// of the type asked, gets an empty answer.
type DNSRecord struct {
	Type string // PTR, A, AAAA or DROP
	// Owner is the name the record answers for, lowercased and absolute
	// (for PTR, and DROP of an address, the in-addr.arpa or ip6.arpa name).
	Owner string
	// Value is the PTR target (absolute, its case kept) or the address.
	Value string
	Line  int
}

// ParseDNS parses a dns file; name and firstLine locate errors as in
// [ParseRequests]. Lines starting with # and blank lines are ignored.
func ParseDNS(name string, firstLine int, data []byte) ([]DNSRecord, error) {
	var recs []DNSRecord
	var errs []error
	for i, text := range strings.Split(string(data), "\n") {
		if j := strings.IndexByte(text, '#'); j >= 0 {
			text = text[:j]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		line := firstLine + i
		r, err := parseDNSRecord(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %v", name, line, err))
			continue
		}
		r.Line = line
		recs = append(recs, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return recs, nil
}

func parseDNSRecord(f []string) (DNSRecord, error) {
	typ := strings.ToUpper(f[0])
	want := 3
	if typ == "DROP" {
		want = 2
	}
	if len(f) != want {
		return DNSRecord{}, fmt.Errorf("%q: want PTR ADDRESS NAME, A NAME ADDRESS, AAAA NAME ADDRESS or DROP ADDRESS|NAME", strings.Join(f, " "))
	}
	owner := func(s string) string { return strings.ToLower(dns.Fqdn(s)) }
	switch typ {
	case "PTR":
		a, err := netip.ParseAddr(f[1])
		if err != nil {
			return DNSRecord{}, fmt.Errorf("PTR: bad address %q", f[1])
		}
		rev, _ := dns.ReverseAddr(a.String())
		return DNSRecord{Type: typ, Owner: rev, Value: dns.Fqdn(f[2])}, nil
	case "A", "AAAA":
		a, err := netip.ParseAddr(f[2])
		if err != nil || (typ == "A") != a.Is4() {
			return DNSRecord{}, fmt.Errorf("%s: bad address %q", typ, f[2])
		}
		return DNSRecord{Type: typ, Owner: owner(f[1]), Value: a.String()}, nil
	case "DROP":
		if a, err := netip.ParseAddr(f[1]); err == nil {
			rev, _ := dns.ReverseAddr(a.String())
			return DNSRecord{Type: typ, Owner: rev}, nil
		}
		return DNSRecord{Type: typ, Owner: owner(f[1])}, nil
	}
	return DNSRecord{}, fmt.Errorf("unknown record type %q: want PTR, A, AAAA or DROP", f[0])
}

// UsesNames reports whether the case looks up host names: it has a hosts
// or dns file, or its legacy configuration has a host-name rule (Allow or
// Deny from a word that is not an address, Require host or forward-dns,
// HostnameLookups other than Off). Such a case may only run inside a
// private name service ([Namespace]).
func (c *Case) UsesNames() bool {
	return c.HasHosts || len(c.DNS) > 0 || hostRules(c.Legacy)
}

var ipWord = regexp.MustCompile(`^([0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*)(/[0-9a-fA-F:.]*)?$`)

// hostRules reports whether a configuration has a directive that makes
// Apache look up the client's host name.
func hostRules(conf []byte) bool {
	for _, line := range strings.Split(string(conf), "\n") {
		f := strings.Fields(strings.ToLower(line))
		if len(f) < 2 {
			continue
		}
		switch {
		case (f[0] == "allow" || f[0] == "deny") && f[1] == "from":
			for _, w := range f[2:] {
				w = strings.Trim(w, `"'`)
				if strings.HasPrefix(w, "#") {
					break
				}
				if w != "all" && !strings.HasPrefix(w, "env=") && !ipWord.MatchString(w) {
					return true
				}
			}
		case f[0] == "require":
			i := 1
			if f[i] == "not" && len(f) > 2 {
				i++
			}
			if f[i] == "host" || f[i] == "forward-dns" {
				return true
			}
		case f[0] == "hostnamelookups" && f[1] != "off":
			return true
		}
	}
	return false
}

// A NameServer is a DNS server on loopback that answers from a case's dns
// records and remembers every question it was asked.
type NameServer struct {
	mu      sync.Mutex
	records []DNSRecord
	asked   []string

	servers []*dns.Server
}

// StartNameServer serves DNS on addr (host:port), over UDP and TCP.
func StartNameServer(addr string) (*NameServer, error) {
	s := &NameServer{}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("apachetest: DNS server: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("apachetest: DNS server: %v", err)
	}
	h := dns.HandlerFunc(s.serve)
	s.servers = []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}}
	for _, srv := range s.servers {
		go srv.ActivateAndServe()
	}
	return s, nil
}

// SetRecords replaces the records and forgets the questions asked so far.
func (s *NameServer) SetRecords(recs []DNSRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records, s.asked = recs, nil
}

// Asked returns the questions asked since the last SetRecords, as
// "NAME TYPE".
func (s *NameServer) Asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// Close stops the server.
func (s *NameServer) Close() {
	for _, srv := range s.servers {
		srv.Shutdown()
	}
}

func (s *NameServer) serve(w dns.ResponseWriter, r *dns.Msg) {
	if len(r.Question) != 1 {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	owner := strings.ToLower(dns.Fqdn(q.Name))
	s.mu.Lock()
	s.asked = append(s.asked, q.Name+" "+dns.TypeToString[q.Qtype])
	var found []DNSRecord
	for _, rec := range s.records {
		if rec.Owner == owner {
			found = append(found, rec)
		}
	}
	s.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative, m.RecursionAvailable = true, true
	if len(found) == 0 {
		m.Rcode = dns.RcodeNameError
	}
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: 0}
	}
	for _, rec := range found {
		switch {
		case rec.Type == "DROP":
			return // never answered
		case rec.Type == "PTR" && q.Qtype == dns.TypePTR:
			m.Answer = append(m.Answer, &dns.PTR{Hdr: hdr(dns.TypePTR), Ptr: rec.Value})
		case rec.Type == "A" && q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: net.ParseIP(rec.Value)})
		case rec.Type == "AAAA" && q.Qtype == dns.TypeAAAA:
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: net.ParseIP(rec.Value)})
		}
	}
	w.WriteMsg(m)
}

// The private files of a namespace, in its directory.
const (
	nsHosts    = "hosts"
	nsResolv   = "resolv.conf"
	nsNsswitch = "nsswitch.conf"
	nsEmpty    = "empty"
	nsParent   = "parent-ns"
)

// The system files that a namespace replaces, and the name-service caches
// it hides (nscd would answer from outside the namespace).
var (
	boundFiles = map[string]string{
		"/etc/hosts":         nsHosts,
		"/etc/resolv.conf":   nsResolv,
		"/etc/nsswitch.conf": nsNsswitch,
	}
	hiddenDirs = []string{"/run/nscd", "/var/run/nscd"}
)

// PrepareNamespace writes into dir the private files of a [Namespace]: a
// hosts file ([DefaultHosts]), [ResolvConf], the system's nsswitch.conf with
// its hosts line replaced by "hosts: files dns", an empty directory, and
// the identities of the current mount and network namespaces (which the
// namespace must differ from). It runs in the parent, before the test
// binary re-executes itself under unshare(1).
func PrepareNamespace(dir string) error {
	nss := "passwd: files\ngroup: files\n"
	if b, err := os.ReadFile("/etc/nsswitch.conf"); err == nil {
		nss = string(b)
	}
	var out []string
	for _, l := range strings.Split(nss, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "hosts:" {
			continue
		}
		out = append(out, l)
	}
	nss = strings.TrimRight(strings.Join(out, "\n"), "\n") + "\nhosts: files dns\n"
	ids, err := namespaceIDs()
	if err != nil {
		return err
	}
	files := map[string]string{nsHosts: DefaultHosts, nsResolv: ResolvConf, nsNsswitch: nss, nsParent: ids}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, nsEmpty), 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// namespaceIDs returns the identities of this process's mount and network
// namespaces, such as "mnt:[4026531841] net:[4026531840]".
func namespaceIDs() (string, error) {
	var ids []string
	for _, ns := range []string{"mnt", "net"} {
		id, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			return "", err
		}
		ids = append(ids, id)
	}
	return strings.Join(ids, " "), nil
}

// A Namespace is the private name service of a test process that runs in
// mount and network namespaces of its own (unshare --mount --net): the
// private files of its directory are bind-mounted over /etc/hosts,
// /etc/resolv.conf and /etc/nsswitch.conf, loopback is the only interface,
// and a [NameServer] answers on 127.0.0.1:53. Apache and orderly, started
// by the test, inherit all of it.
type Namespace struct {
	Dir string
	ns  *NameServer
}

// EnterNamespace sets up the private name service from dir (written by
// [PrepareNamespace]). The calling process must already be in new mount
// and network namespaces, as root.
func EnterNamespace(dir string) (*Namespace, error) {
	n := &Namespace{Dir: dir}
	parent, err := os.ReadFile(filepath.Join(dir, nsParent))
	if err != nil {
		return nil, err
	}
	ids, err := namespaceIDs()
	if err != nil {
		return nil, err
	}
	p, c := strings.Fields(string(parent)), strings.Fields(ids)
	if len(p) != 2 || p[0] == c[0] || p[1] == c[1] {
		return nil, fmt.Errorf("not in a mount and network namespace of its own (%s, parent %s)", ids, parent)
	}
	// Mounts made here must not propagate back (unshare(1) already makes
	// everything private; this holds however the process was started).
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("making mounts private: %v", err)
	}
	for target, name := range boundFiles {
		if err := syscall.Mount(filepath.Join(dir, name), target, "", syscall.MS_BIND, ""); err != nil {
			return nil, fmt.Errorf("bind-mounting %s over %s: %v", filepath.Join(dir, name), target, err)
		}
	}
	for _, d := range hiddenDirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			if err := syscall.Mount(filepath.Join(dir, nsEmpty), d, "", syscall.MS_BIND, ""); err != nil {
				return nil, fmt.Errorf("hiding %s: %v", d, err)
			}
		}
	}
	if err := loopbackUp(); err != nil {
		return nil, err
	}
	if err := n.Sealed(); err != nil {
		return nil, err
	}
	if n.ns, err = StartNameServer("127.0.0.1:53"); err != nil {
		return nil, err
	}
	return n, nil
}

// loopbackUp brings up lo, the only interface of a new network namespace
// (down when the namespace is made).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then a union whose first field is the short ifr_flags
	copy(ifr[:], "lo")
	flags := (*uint16)(unsafe.Pointer(&ifr[syscall.IFNAMSIZ]))
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return fmt.Errorf("reading the flags of lo: %v", e)
	}
	*flags |= syscall.IFF_UP
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return fmt.Errorf("bringing up lo: %v", e)
	}
	return nil
}

// Sealed checks that no lookup can leave the machine: the process is in
// network and mount namespaces other than its parent's, the only network
// interface is loopback, and /etc/hosts, /etc/resolv.conf and
// /etc/nsswitch.conf are the private files.
func (n *Namespace) Sealed() error {
	parent, err := os.ReadFile(filepath.Join(n.Dir, nsParent))
	if err != nil {
		return err
	}
	ids, err := namespaceIDs()
	if err != nil {
		return err
	}
	for _, id := range strings.Fields(ids) {
		if bytes.Contains(parent, []byte(id)) {
			return fmt.Errorf("still in the parent's namespace %s", id)
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("network interface %s is not loopback", i.Name)
		}
	}
	for target, name := range boundFiles {
		a, err1 := os.Stat(target)
		b, err2 := os.Stat(filepath.Join(n.Dir, name))
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			return fmt.Errorf("%s is not the private %s", target, filepath.Join(n.Dir, name))
		}
	}
	return nil
}

// Install makes the case's names the ones that Apache and orderly see: its
// hosts file (or [DefaultHosts]) becomes /etc/hosts, and its dns records
// the answers of the DNS server. It refuses when [Namespace.Sealed] fails.
func (n *Namespace) Install(c *Case) error {
	if err := n.Sealed(); err != nil {
		return fmt.Errorf("refusing to run a case outside a private name service: %v", err)
	}
	hosts := []byte(DefaultHosts)
	if c.HasHosts {
		hosts = c.Hosts
	}
	// Written in place: the bind mount holds this very file.
	if err := os.WriteFile(filepath.Join(n.Dir, nsHosts), hosts, 0o644); err != nil {
		return err
	}
	n.ns.SetRecords(c.DNS)
	return nil
}

// Asked returns the DNS questions asked since the last Install.
func (n *Namespace) Asked() []string { return n.ns.Asked() }

// Close stops the DNS server.
func (n *Namespace) Close() { n.ns.Close() }
