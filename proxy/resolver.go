package proxy

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Resolver finds a client's double-reverse verified host name, as Apache
// does for host rules (ap_get_remote_host with REMOTE_DOUBLE_REV;
// apache-access-semantics.md §6.4): the PTR name of the address, lowercased,
// kept only when a forward lookup of that name gives the address back.
// Without a verified name, host rules never match, whatever the failure
// (no PTR, a forward mismatch, a timeout).
type Resolver struct {
	r       *net.Resolver
	timeout time.Duration
}

// NewResolver returns a resolver that asks the DNS server at addr
// (host:port), or the system's resolver (with /etc/hosts) when addr is
// empty. Each lookup is bounded by timeout (default 5s).
func NewResolver(addr string, timeout time.Duration) *Resolver {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	r := &net.Resolver{PreferGo: true}
	if addr != "" {
		r.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	return &Resolver{r: r, timeout: timeout}
}

// Verified returns the verified host name of addr.
func (v *Resolver) Verified(addr netip.Addr) (string, bool) {
	if v == nil || !addr.IsValid() {
		return "", false
	}
	addr = addr.Unmap()
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout)
	defer cancel()
	names, err := v.r.LookupAddr(ctx, addr.String())
	if err != nil || len(names) == 0 {
		return "", false
	}
	name := strings.ToLower(strings.TrimSuffix(names[0], "."))
	ips, err := v.r.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return "", false
	}
	for _, ip := range ips {
		if ip.Unmap() == addr {
			return name, true
		}
	}
	return "", false
}
