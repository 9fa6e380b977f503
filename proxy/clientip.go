package proxy

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr returns the client address of r: the connection's peer, or,
// when the peer is a trusted proxy, the right-most X-Forwarded-For entry
// that is not itself a trusted proxy (as mod_remoteip reads the header). ok
// is false when a trusted peer sent an address orderly cannot parse: the
// request is then refused rather than guessed at.
func clientAddr(r *http.Request, trusted []netip.Prefix) (addr netip.Addr, fromHeader, ok bool) {
	peer := peerAddr(r)
	if !isTrusted(peer, trusted) {
		return peer, false, true
	}
	values := r.Header.Values("X-Forwarded-For")
	if len(values) == 0 {
		return peer, false, true
	}
	var hops []string
	for _, v := range values {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHop(hops[i])
		if err != nil {
			return netip.Addr{}, false, false
		}
		client, fromHeader = a, true
		if !isTrusted(a, trusted) {
			break
		}
	}
	return client, fromHeader, true
}

// parseHop reads one X-Forwarded-For entry: an address, and nothing else.
// mod_remoteip cannot read "address:port" or "[address]" either: it stops
// there and leaves the client at the proxy (TestSecurityCorpus,
// xff/trusted-port), so taking the address from such an entry would let
// a client through that Apache refuses.
func parseHop(h string) (netip.Addr, error) {
	a, err := netip.ParseAddr(h)
	if err != nil {
		return a, err
	}
	return a.WithZone("").Unmap(), nil
}

func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	host, _, _ = strings.Cut(host, "%")
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
