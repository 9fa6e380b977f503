package differential

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate"
)

// TestTranslatedCorpus is the proof of orderly translate: each corpus case
// is translated to Apache 2.4 Require rules (with 2.4-compat semantics,
// so that both sides mean the same thing), run on real Apache 2.4
// without mod_access_compat (which refuses to start on anything it does
// not accept), and its answers compared with the legacy configuration's
// under mod_access_compat, request by request. Cases whose translation
// needs review are counted apart; .htaccess files are translated in place
// once the legacy answers are in.
func TestTranslatedCorpus(t *testing.T) {
	apachetest.Require(t)
	cases, err := apachetest.LoadCorpus(*corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := apachetest.TempDir(t)
	var oracle, translated *apachetest.Server
	var nCases, nHt, nAgree, nReq, skipped, review int
	for _, c := range cases {
		if *only != "" && !strings.Contains(c.Name, *only) {
			continue
		}
		if !useNames(t, c) {
			skipped++
			continue
		}
		l, err := c.Materialize(filepath.Join(tmp, c.Name))
		if err != nil {
			t.Fatal(err)
		}
		conv, err := translate.Convert([]string{l.Legacy}, translate.ConvertOptions{LoadOptions: translate.LoadOptions{
			Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: l.DocRoot, ForwardUnfaithful: true},
			Modules: caseModules(l)}}) // ssl_test.go
		if err != nil {
			t.Errorf("%s: translate: %v", c.Path, err)
			continue
		}
		if len(conv.Reviews) > 0 {
			review++
			continue
		}
		if oracle == nil {
			oracle = apachetest.Start(t, l.OracleOptions())
		} else {
			oracle.Reload(t, l.OracleOptions())
		}
		// The legacy answers first: the translated .htaccess files
		// replace the legacy ones in the same tree.
		wants := make([]apachetest.Response, len(c.Requests))
		for i, rq := range c.Requests {
			if wants[i], err = apachetest.Do(oracle.Addr, rq); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(l.Dir, "translated.conf")
		for f, b := range conv.Files {
			if f == l.Legacy {
				f = out
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if hasHtaccess(l.DocRoot) {
			nHt++
		}
		topt := apachetest.Options{DocumentRoot: l.DocRoot, Include: []string{out}, RemoteIP: true, Modules: l.Modules}
		if err := startOrReload(t, &translated, topt); err != nil {
			b, _ := os.ReadFile(out)
			t.Errorf("%s: Apache 2.4 without mod_access_compat refuses the translation: %v\n%s", c.Path, err, b)
			translated = nil
			continue
		}
		nCases++
		for i, rq := range c.Requests {
			want := wants[i]
			got, err := apachetest.Do(translated.Addr, rq)
			if err != nil {
				t.Fatal(err)
			}
			nReq++
			if want.Class() == got.Class() {
				nAgree++
				continue
			}
			t.Errorf("%s:%d: %s: legacy %s, translated %s", c.Path, rq.Line, rq, want.Class(), got.Class())
		}
	}
	fmt.Printf("translate: %d/%d requests agree across %d translated cases (%d with .htaccess files; %d need review, %d skipped: host names)\n",
		nAgree, nReq, nCases, nHt, review, skipped)
}

func hasHtaccess(root string) bool {
	found := false
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == ".htaccess" {
			found = true
		}
		return nil
	})
	return found
}

// startOrReload runs an Apache with opt, reporting a configuration it
// refuses as an error rather than failing the test.
func startOrReload(t *testing.T, s **apachetest.Server, opt apachetest.Options) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	sub := &testing.T{}
	_ = sub
	if *s == nil {
		*s = apachetest.Start(t, opt)
	} else {
		(*s).Reload(t, opt)
	}
	return nil
}
