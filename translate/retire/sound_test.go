package retire

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/internal/gen"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/authfile"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// TestRetireSound is the proof that retirement by necessity is sound:
// over 300 generated configurations (Order, Allow, Deny, Satisfy Any,
// <Limit>, env=, SetEnvIf, Require, Basic authentication, .htaccess
// files) and their traffic from random clients and methods, every rule
// the verdicts call "can go", and every one Static calls dead, is
// deleted (translate's Omit, as demotion deletes it) and the same
// traffic replayed: no answer may change. And
// the converse on a sample: deleting a rule called "needed" changes at
// least one answer, but for at most 2% (necessity is counted
// conservatively: a count too many only calls a removable rule needed).
func TestRetireSound(t *testing.T) {
	dir := t.TempDir()
	s := sumOverConfigs(300, 2*runtime.GOMAXPROCS(0), func(n uint64) []int {
		c, d, nd, ns, no, sc, sn, so := retireSound(t, dir, n)
		return []int{c, d, nd, ns, no, sc, sn, so}
	})
	canGo, dead, needed, neededSample, neededOver, secCanGo, secNeeded, secOver := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	t.Logf("300 configurations: %d rules called can go and %d dead, each deleted without changing an answer; %d needed, %d of them deleted, %d changing no answer; %d sections whose access lines can go together, deleted without changing an answer, and %d needed deleted, %d of them changing no answer (counted conservatively)", canGo, dead, needed, neededSample, neededOver, secCanGo, secNeeded, secOver)
	if neededOver*50 > neededSample {
		t.Errorf("%d of %d rules called needed change no answer when deleted: more than 2%% overcounted", neededOver, neededSample)
	}
	if canGo < 50 || dead < 20 || neededSample < 50 || secCanGo < 30 || secNeeded < 50 {
		t.Errorf("%d rules can go, %d needed rules checked, %d sections can go, %d needed checked: the test proves too little", canGo, neededSample, secCanGo, secNeeded)
	}
	if secOver*50 > secNeeded {
		t.Errorf("%d of %d sections called needed change no answer when deleted: more than 2%% overcounted", secOver, secNeeded)
	}
}

// soundRequests are the requests replayed on configuration n: each of
// the case's, from several clients and methods.
func soundRequests(c *apachetest.Case, n uint64) []func() *walk.Request {
	r := rand.New(rand.NewPCG(43, n))
	var out []func() *walk.Request
	for _, rq := range c.Requests {
		for range 6 {
			ip := rq.ClientIP
			if ip == "" || r.IntN(2) == 0 {
				ip = netip.AddrFrom4([4]byte{[]byte{10, 192, 203, 127}[r.IntN(4)], byte(r.IntN(256)), byte(r.IntN(4)), byte(r.IntN(256))}).String()
			}
			method := []string{rq.Method, "GET", "POST", "PUT", "DELETE"}[r.IntN(5)]
			auth := policy.Credentials{Present: rq.HasAuth, Basic: rq.HasAuth, User: rq.User, Password: rq.Password}
			h := http.Header{}
			for _, kv := range rq.Header {
				h.Add(kv[0], kv[1])
			}
			target := rq.Target
			out = append(out, func() *walk.Request {
				return &walk.Request{Method: method, Target: target, Host: h.Get("Host"), Proto: "HTTP/1.1",
					Header: h.Clone(), ClientAddr: netip.MustParseAddr(ip), Auth: auth}
			})
		}
	}
	return out
}

// answer is what a client sees of a decision.
func answerOf(res walk.Result) string {
	a := fmt.Sprint(res.Status)
	if res.Status == 401 {
		a += " realm " + res.Realm
	}
	if res.Location != "" {
		a += " to " + res.Location
	}
	return a
}

func retireSound(t *testing.T, dir string, n uint64) (canGo, dead, needed, neededSample, neededOver, secCanGo, secNeeded, secOver int) {
	c := gen.Generate(rand.New(rand.NewPCG(44, n)))
	l, err := c.Materialize(filepath.Join(dir, fmt.Sprint(n)))
	if err != nil {
		t.Error(err)
		return
	}
	load := func(omit map[string]bool) (*translate.Config, *walk.Engine) {
		cfg, err := translate.Load([]string{l.Legacy}, caseLoadOptions(c, l, omit))
		if err != nil {
			// Not Fatal: this runs on a worker goroutine.
			t.Errorf("case %d (omitting %v): %v", n, omit, err)
			return nil, nil
		}
		return cfg, walk.New(cfg, walk.OS, authfile.NewIdentity())
	}
	cfg, e := load(nil)
	if e == nil {
		return
	}
	reqs := soundRequests(c, n)
	answers := make([]string, len(reqs))
	for i, mk := range reqs {
		answers[i] = answerOf(e.Decide(mk(), nil))
	}
	ix := IndexOf(cfg)
	ix.AddSections(e.HtaccessSections())
	findings := append(FromCounters(e.Rules(), ix, "in the test", cfg.Methods), Static(cfg)...)
	replay := func(ids ...string) (changed int, first string) {
		omit := map[string]bool{}
		for _, id := range ids {
			omit[id] = true
		}
		_, e2 := load(omit)
		if e2 == nil {
			return 0, ""
		}
		for i, mk := range reqs {
			rq := mk()
			rq.Dry = true
			if a := answerOf(e2.Decide(rq, nil)); a != answers[i] {
				if changed == 0 {
					first = fmt.Sprintf("%s %s from %s: %s, was %s", rq.Method, rq.Target, rq.ClientAddr, a, answers[i])
				}
				changed++
			}
		}
		return changed, first
	}
	// A section's verdict is about deleting all its access lines at once.
	sections := map[string][]string{}
	for _, sec := range append(Sections(cfg), e.HtaccessSections()...) {
		if sec.Default == nil {
			continue
		}
		for _, r := range sec.Lines {
			if translate.IsSectionAccess(r.Text) {
				sections[sec.Default.ID] = append(sections[sec.Default.ID], r.ID)
			}
		}
	}
	sampled, secSampled := 0, 0
	for _, f := range findings {
		switch f.Verdict {
		case SectionCanGo:
			secCanGo++
			if changed, first := replay(sections[f.RuleID]...); changed > 0 {
				b, _ := os.ReadFile(l.Legacy)
				t.Errorf("case %d: %s:%d %s: section can go (%s), and deleting its access lines %v changes %d answers, first %s\n%s", n, f.File, f.Line, f.Text, f.Why, sections[f.RuleID], changed, first, b)
			}
			continue
		case SectionNeeded:
			if secSampled >= 2 {
				continue
			}
			secSampled++
			secNeeded++
			// Deciding again without the section covers the decision it
			// was in force for, not what the rest of the request would
			// do without it: a directory refused by the section, then by
			// its index's own section, counts once too often. Such
			// overcounts are tallied, and bounded below.
			if changed, _ := replay(sections[f.RuleID]...); changed == 0 {
				secOver++
			}
			continue
		}
		if !demotableText(f.Text) {
			continue // SetEnvIf lines and sections: not deleted one by one here
		}
		switch f.Verdict {
		case Dead:
			dead++
			if changed, first := replay(f.RuleID); changed > 0 {
				b, _ := os.ReadFile(l.Legacy)
				t.Errorf("case %d: %s:%d %q called dead (%s), and deleting it changes %d answers, first %s\n%s", n, f.File, f.Line, f.Text, f.Why, changed, first, b)
			}
		case CanGo:
			canGo++
			if changed, first := replay(f.RuleID); changed > 0 {
				b, _ := os.ReadFile(l.Legacy)
				t.Errorf("case %d: %s:%d %q called can go (%s), and deleting it changes %d answers, first %s\n%s", n, f.File, f.Line, f.Text, f.Why, changed, first, b)
			}
		case Needed:
			needed++
			if sampled >= 2 {
				continue
			}
			sampled++
			neededSample++
			if changed, _ := replay(f.RuleID); changed == 0 {
				// Counted conservatively (countNecessary): a count too
				// many only ever calls a removable rule needed.
				neededOver++
				t.Logf("case %d: %s:%d %q called needed (%s), and deleting it changes no answer", n, f.File, f.Line, f.Text, f.Why)
			}
		}
	}
	return canGo, dead, needed, neededSample, neededOver, secCanGo, secNeeded, secOver
}

// demotableText reports whether a rule is one Omit deletes (translate's
// demotable directives that get a verdict: Allow, Deny, Require).
func demotableText(text string) bool {
	name, _, _ := strings.Cut(strings.ToLower(text), " ")
	return name == "allow" || name == "deny" || name == "require"
}
