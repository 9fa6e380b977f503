package gen

import (
	"fmt"
	"path"
	"strings"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// Generic client addresses: outside every generated rule, or loopback.
var outsiders = []string{"8.8.8.8", "127.0.0.1", "::1", "2001:db8:ffff::1", "198.51.100.7", "fe80::1"}

var methods = []struct {
	name   string
	weight int
}{
	{"GET", 42}, {"HEAD", 10}, {"POST", 16}, {"PUT", 8}, {"DELETE", 8}, {"OPTIONS", 8}, {"FOO", 8},
}

// requests writes 8-15 requests aimed at the configuration's edges:
// addresses at each subnet's boundaries, paths in each section and next to
// it (spelled in the ways Apache normalises), every method, with and
// without credentials and the headers SetEnvIf reads.
func (g *generator) requests() {
	var edges []string
	for _, s := range pickN(g, g.nets, 5) {
		edges = append(edges, g.edges(s)...)
	}
	for _, a := range g.anchors4 {
		edges = append(edges, v4String(a))
	}
	n := 8 + g.intn(8)
	for range n {
		rq := apachetest.Request{Method: g.method(), Target: g.target()}
		if rq.Method == "TRACE" && g.opt.Avoid[TraceAboveRoot] && climbs(rq.Target) {
			p, q, _ := strings.Cut(rq.Target, "?")
			rq.Target = path.Clean(p)
			if q != "" {
				rq.Target += "?" + q
			}
		}
		switch x := g.intn(100); {
		case x < 70 && len(edges) > 0:
			rq.ClientIP = pick(g, edges)
		case x < 74:
			rq.ClientIP = "::ffff:" + v4String(pick(g, g.anchors4))
		default:
			rq.ClientIP = pick(g, outsiders)
		}
		if (g.auth && g.chance(0.6)) || g.chance(0.06) {
			g.credentials(&rq)
		}
		for _, attr := range g.envAttrs {
			if vals, ok := attrValues[attr]; ok && g.chance(0.6) {
				rq.Header = append(rq.Header, [2]string{attr, pick(g, vals)})
			}
		}
		g.reqs = append(g.reqs, rq)
	}
}

func (g *generator) method() string {
	total := 0
	for _, m := range methods {
		total += m.weight
	}
	if g.on[Trace] && g.chance(0.15) {
		return "TRACE"
	}
	x := g.intn(total)
	for _, m := range methods {
		if x < m.weight {
			return m.name
		}
		x -= m.weight
	}
	return "GET"
}

func (g *generator) credentials(rq *apachetest.Request) {
	u := pick(g, Users)
	rq.HasAuth = true
	switch x := g.intn(100); {
	case x < 58:
		rq.User, rq.Password = u.Name, u.Password
	case x < 78:
		rq.User, rq.Password = u.Name, "wrong"
	case x < 88:
		rq.User, rq.Password = "mallory", "x"
	case x < 93:
		rq.User, rq.Password = "ghost", "boo"
	default:
		rq.User, rq.Password = strings.ToUpper(u.Name[:1])+u.Name[1:], u.Password
	}
}

// target picks a path, aimed at a section three times out of five, and
// respells it sometimes.
func (g *generator) target() string {
	var p string
	if len(g.paths) > 0 && g.chance(0.6) {
		p = pick(g, g.paths)
	} else {
		switch x := g.intn(10); {
		case x < 3:
			p = "/" + pick(g, g.files)
		case x < 5:
			d := pick(g, g.dirs)
			p = "/" + d
			if d != "" && g.chance(0.6) {
				p += "/"
			}
		case x < 6:
			p = "/" + pick(g, g.missing) + "/x.html"
		case x < 7:
			d := pick(g, g.dirs)
			if d != "" {
				d += "/"
			}
			p = "/" + d + "missing.html"
		case x < 8:
			p = "/" + pick(g, g.files) + "/extra"
		default:
			p = "/"
		}
	}
	if g.wide && len(g.links) > 0 && g.chance(0.25) {
		p = pick(g, g.links)
	}
	if g.wide {
		p = g.encodeTarget(p)
	}
	for g.chance(0.35) {
		p = g.respell(p)
	}
	return p
}

// respell changes how p is written, mostly not what it means to Apache
// (§5): dot segments, doubled slashes, %-encoded letters; sometimes it
// does: letter case, a trailing slash, path info, a query string, ".."
// above the root (400), %2F (404).
func (g *generator) respell(p string) string {
	slashes := []int{}
	for i := range len(p) {
		if p[i] == '/' {
			slashes = append(slashes, i)
		}
	}
	if len(slashes) == 0 {
		return p
	}
	at := pick(g, slashes)
	switch x := g.intn(100); {
	case x < 14:
		return p[:at] + "/." + p[at:]
	case x < 26:
		return p[:at] + "/zz/.." + p[at:]
	case x < 38:
		return p[:at] + "/" + p[at:]
	case x < 56:
		var letters []int
		for i := range len(p) {
			if c := p[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				if i == 0 || p[i-1] != '%' && (i < 2 || p[i-2] != '%') {
					letters = append(letters, i)
				}
			}
		}
		if len(letters) == 0 {
			return p
		}
		i := pick(g, letters)
		f := "%%%02X"
		if g.chance(0.5) {
			f = "%%%02x"
		}
		return p[:i] + fmt.Sprintf(f, p[i]) + p[i+1:]
	case x < 66:
		end := strings.IndexByte(p[at+1:], '/')
		if end < 0 {
			end = len(p)
		} else {
			end += at + 1
		}
		return p[:at+1] + strings.ToUpper(p[at+1:end]) + p[end:]
	case x < 74:
		if strings.HasSuffix(p, "/") && len(p) > 1 {
			return strings.TrimSuffix(p, "/")
		}
		return p + "/"
	case x < 82:
		return strings.TrimSuffix(p, "/") + "/more/info"
	case x < 88:
		return p + "?q=1"
	case x < 91:
		return p[:at] + "/%2e" + p[at:]
	case x < 95:
		return "/.." + p
	default:
		if at == 0 {
			return p
		}
		return p[:at] + "%2f" + p[at+1:]
	}
}

// climbs reports whether a target's path climbs above the root with its
// ".." segments, a "." written as %2e too (Apache decodes it before it
// normalizes the path: /%2e/../x climbs).
func climbs(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	depth := 0
	for _, seg := range strings.Split(p, "/")[1:] {
		switch strings.ReplaceAll(strings.ReplaceAll(seg, "%2e", "."), "%2E", ".") {
		case "..":
			if depth == 0 {
				return true
			}
			depth--
		case ".", "":
		default:
			depth++
		}
	}
	return false
}
