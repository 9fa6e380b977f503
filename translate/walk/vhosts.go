package walk

import (
	"strings"

	"github.com/orderly-proxy/orderly/translate"
)

// hostSet is the virtual hosts that may serve a request reaching the
// legacy address, in configuration order, with their names indexed:
// Apache works the set out per connection (server/vhost.c); orderly's
// address is fixed, so it is worked out once, when the engine is made
// (indexHosts), and picking a host does not grow with the number of
// virtual hosts.
type hostSet struct {
	hosts []hostEngine
	// exact holds every ServerName and ServerAlias as written, with the
	// index of the first host that names it.
	exact map[string]int
	// wild is the hosts with a ServerAlias holding a wildcard, in order.
	wild []wildHost
}

// wildHost is a host of a hostSet (its index) and its wildcard aliases.
type wildHost struct {
	i        int
	patterns []string
}

// newHostSet indexes hosts, in configuration order.
func newHostSet(hosts []hostEngine) hostSet {
	s := hostSet{hosts: hosts, exact: map[string]int{}}
	name := func(n string, i int) {
		if _, ok := s.exact[n]; !ok && n != "" {
			s.exact[n] = i
		}
	}
	for i, h := range hosts {
		name(h.v.Name, i)
		var wild []string
		for _, a := range h.v.Aliases {
			name(a, i)
			if strings.ContainsAny(a, "*?[") {
				wild = append(wild, a)
			}
		}
		if wild != nil {
			s.wild = append(s.wild, wildHost{i: i, patterns: wild})
		}
	}
	return s
}

// pick is the host whose ServerName or ServerAlias matches name (as
// fixHostname makes it; "" matches none), the first such in
// configuration order, else the first host of the set (its default):
// check_hostalias in server/vhost.c. The set must not be empty.
func (s *hostSet) pick(name string) *Engine {
	best := len(s.hosts)
	if name != "" {
		if i, ok := s.exact[name]; ok {
			best = i
		}
		for _, w := range s.wild {
			if w.i >= best {
				break
			}
			for _, p := range w.patterns {
				if fnmatchFold(p, name) {
					return s.hosts[w.i].e
				}
			}
		}
	}
	if best < len(s.hosts) {
		return s.hosts[best].e
	}
	return s.hosts[0].e
}

// indexHosts works out, for the legacy address and port, the hosts that
// may serve a request of each connection kind (tlsAny, tlsNo, tlsYes).
// Without a host with SSLEngine on the kinds do not differ, and share
// one index.
func (e *Engine) indexHosts() {
	e.hostSets[tlsAny] = newHostSet(e.candidates(tlsAny))
	for _, t := range []int8{tlsNo, tlsYes} {
		if e.sslHosts {
			e.hostSets[t] = newHostSet(e.candidates(t))
		} else {
			e.hostSets[t] = e.hostSets[tlsAny]
		}
	}
}

// candidates are the virtual hosts bound to the legacy address that may
// serve a connection of kind t: those naming the IP exactly, else the
// wildcard ones, in configuration order; with t tlsYes or tlsNo and a
// host with SSLEngine on, only the hosts of that kind.
func (e *Engine) candidates(t int8) []hostEngine {
	portOK := func(a translate.VHostAddr) bool {
		return a.Port == 0 || e.localPort == 0 || a.Port == e.localPort
	}
	var set []hostEngine
	for _, wildcard := range []bool{false, true} {
		for _, h := range e.hosts {
			if !e.tlsCandidate(h, t) {
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
	return set
}
