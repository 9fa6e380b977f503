package differential

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/authfile"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/convert"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// TestTranslated22 checks the cases of testdata/translate22, 2.2
// configurations Apache 2.4 cannot run (2.2's auth_checker chain with
// mod_authnz_ldap and mod_authz_dbm, their Authz*Authoritative flags):
// orderly decides each request with semantics "2.2" and must answer the
// request's want=, derived from the 2.2.x sources in the case; then the
// case translated with semantics "2.2" runs on Apache 2.4 without
// mod_access_compat, which must answer every request as orderly did
// (the status, and a 401's realm). See testdata/translate22/README.md.
func TestTranslated22(t *testing.T) {
	apachetest.Require(t)
	cases, err := apachetest.LoadCorpus("../../testdata/translate22")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no case in testdata/translate22")
	}
	startLDAP(t, cases)
	tmp := apachetest.TempDir(t)
	requests := 0
	for _, c := range cases {
		l, err := c.Materialize(filepath.Join(tmp, c.Name))
		if err != nil {
			t.Fatal(err)
		}
		mods := append([]string(nil), translate.FragmentModules22...)
		for _, m := range l.Modules {
			mods = append(mods, m+"_module")
		}
		lo := translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: l.DocRoot}, Modules: mods}
		cfg, err := translate.Load([]string{l.Legacy}, lo)
		if err != nil {
			t.Fatalf("%s: orderly refuses the case: %v", c.Path, err)
		}
		e := walk.New(cfg, walk.OS, authfile.NewIdentity())
		ours := make([]string, len(c.Requests))
		for i, rq := range c.Requests {
			wr := &walk.Request{Method: rq.Method, Target: rq.Target, Proto: "HTTP/1.1", Header: http.Header{},
				ClientAddr: netip.MustParseAddr(rq.ClientIP), LocalAddr: netip.MustParseAddr("127.0.0.1"), Dry: true}
			if rq.HasAuth {
				wr.Auth = policy.Credentials{Present: true, Basic: true, User: rq.User, Password: rq.Password}
			}
			res := e.Decide(wr, nil)
			st := res.Status
			if st == 0 {
				st = 200
			}
			if rq.Want != "" && rq.Want != strconv.Itoa(st) {
				t.Errorf("%s:%d: %s: orderly (2.2) answers %d, the case says %s", c.Path, rq.Line, rq, st, rq.Want)
			}
			ours[i] = strconv.Itoa(st)
			if st == 401 {
				ours[i] += " realm=" + strconv.Quote(res.Realm)
			}
		}
		conv, err := convert.Convert([]string{l.Legacy}, convert.Options{LoadOptions: lo})
		if err != nil {
			t.Fatalf("%s: translate: %v", c.Path, err)
		}
		for _, d := range conv.Reviews {
			t.Errorf("%s: left for review: %s:%d: %s", c.Path, d.Pos.File, d.Pos.Line, d.Text)
		}
		out := filepath.Join(l.Dir, "translated.conf")
		if err := os.WriteFile(out, conv.Files[l.Legacy], 0o644); err != nil {
			t.Fatal(err)
		}
		srv := apachetest.Start(t, apachetest.Options{DocumentRoot: l.DocRoot, Include: []string{out}, RemoteIP: true, Modules: l.Modules})
		for i, rq := range c.Requests {
			got, err := apachetest.Do(srv.Addr, rq)
			if err != nil {
				t.Fatalf("%s:%d: %v", c.Path, rq.Line, err)
			}
			theirs := strconv.Itoa(got.Status)
			if got.Status == 401 {
				realm, _ := apachetest.Realm(got.WWWAuthenticate)
				theirs += " realm=" + strconv.Quote(realm)
			}
			requests++
			if theirs != ours[i] {
				b, _ := os.ReadFile(out)
				t.Errorf("%s:%d: %s: orderly (2.2) %s, the translation on Apache 2.4 %s\n%s", c.Path, rq.Line, rq, ours[i], theirs, b)
			}
		}
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	}
	t.Logf("translate22: %d cases, %d requests compared", len(cases), requests)
}
