package proxy

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"
)

// Resolver finds a client's double-reverse verified host name, as Apache
// does for host rules (ap_get_remote_host with REMOTE_DOUBLE_REV;
// apache-access-semantics.md §6.4): the PTR name of the address, lowercased,
// kept only when a forward lookup of that name gives the address back.
// Without a verified name, host rules never match, whatever the failure
// (no PTR, a forward mismatch, a timeout).
//
// Like glibc with "hosts: files dns" (Debian's nsswitch.conf), the hosts
// file is consulted first and names in it are taken as written (a final
// dot included, which then matches no domain rule, as in Apache); then DNS.
type Resolver struct {
	r         *net.Resolver
	timeout   time.Duration
	hostsPath string // "" when a DNS server is configured: no hosts file

	mu    sync.Mutex
	hosts *hostsFile
}

// NewResolver returns a resolver that asks the DNS server at addr
// (host:port), or the system's resolver (/etc/hosts, then the servers of
// /etc/resolv.conf) when addr is empty. Each lookup is bounded by timeout
// (default 5s).
func NewResolver(addr string, timeout time.Duration) *Resolver {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	r := &net.Resolver{PreferGo: true}
	v := &Resolver{r: r, timeout: timeout, hostsPath: "/etc/hosts"}
	if addr != "" {
		r.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		v.hostsPath = ""
	}
	return v
}

// Verified returns the verified host name of addr.
func (v *Resolver) Verified(addr netip.Addr) (string, bool) {
	if v == nil || !addr.IsValid() {
		return "", false
	}
	addr = addr.Unmap()
	if h := v.hostsTable(); h != nil {
		if name, ok := h.reverse(addr); ok {
			// The forward lookup of a name the hosts file knows is
			// answered by the hosts file alone.
			if ips, ok := h.forward(name); ok {
				for _, ip := range ips {
					if ip == addr {
						return strings.ToLower(name), true
					}
				}
				return "", false
			}
			return v.forwardDNS(name, addr)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout)
	defer cancel()
	// Go drops PTR records that are not valid host names and reports an
	// error with the others; glibc takes the first answer. Keep what came.
	names, _ := v.r.LookupAddr(ctx, addr.String())
	if len(names) == 0 {
		return "", false
	}
	name := strings.ToLower(strings.TrimSuffix(names[0], "."))
	if h := v.hostsTable(); h != nil {
		if ips, ok := h.forward(name); ok {
			for _, ip := range ips {
				if ip == addr {
					return name, true
				}
			}
			return "", false
		}
	}
	return v.forwardDNS(name, addr)
}

// Name returns the name of addr without the forward check, lower case:
// the first name of the hosts file's first line with the address, else
// the first PTR answer, as glibc's getnameinfo gives it to Apache under
// HostnameLookups On (ap_get_useragent_host; Remote_Host in SetEnvIf).
// It implements walk.NameResolver.
func (v *Resolver) Name(addr netip.Addr) (string, bool) {
	if v == nil || !addr.IsValid() {
		return "", false
	}
	addr = addr.Unmap()
	if h := v.hostsTable(); h != nil {
		if name, ok := h.reverse(addr); ok {
			return strings.ToLower(name), true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout)
	defer cancel()
	names, _ := v.r.LookupAddr(ctx, addr.String())
	if len(names) == 0 {
		return "", false
	}
	return strings.ToLower(strings.TrimSuffix(names[0], ".")), true
}

func (v *Resolver) forwardDNS(name string, addr netip.Addr) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout)
	defer cancel()
	ips, err := v.r.LookupNetIP(ctx, "ip", strings.TrimSuffix(name, "."))
	if err != nil {
		return "", false
	}
	for _, ip := range ips {
		if ip.Unmap() == addr {
			return strings.ToLower(name), true
		}
	}
	return "", false
}

// hostsTable returns the hosts file, read again when it changes.
func (v *Resolver) hostsTable() *hostsFile {
	if v.hostsPath == "" {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	fi, err := os.Stat(v.hostsPath)
	if err != nil {
		v.hosts = nil
		return nil
	}
	if v.hosts != nil && v.hosts.mod.Equal(fi.ModTime()) && v.hosts.size == fi.Size() && time.Since(fi.ModTime()) > 2*time.Second {
		return v.hosts
	}
	data, err := os.ReadFile(v.hostsPath)
	if err != nil {
		return nil
	}
	v.hosts = parseHosts(data)
	v.hosts.mod, v.hosts.size = fi.ModTime(), fi.Size()
	return v.hosts
}

// hostsFile is /etc/hosts as glibc's files backend reads it: for an
// address, the first name of the first line that has it; for a name, the
// addresses of every line that has it, case-insensitively.
type hostsFile struct {
	lines []hostsLine
	mod   time.Time
	size  int64
}

type hostsLine struct {
	ip    netip.Addr
	names []string
}

func parseHosts(data []byte) *hostsFile {
	h := &hostsFile{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		h.lines = append(h.lines, hostsLine{ip: ip.Unmap(), names: f[1:]})
	}
	return h
}

func (h *hostsFile) reverse(a netip.Addr) (string, bool) {
	for _, l := range h.lines {
		if l.ip == a {
			return l.names[0], true
		}
	}
	return "", false
}

func (h *hostsFile) forward(name string) ([]netip.Addr, bool) {
	var out []netip.Addr
	for _, l := range h.lines {
		for _, n := range l.names {
			if strings.EqualFold(n, name) {
				out = append(out, l.ip)
				break
			}
		}
	}
	return out, len(out) > 0
}
