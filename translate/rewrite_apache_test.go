package translate

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestRewriteSyntaxMatchesApache24 holds orderly's reading of
// mod_rewrite's lines (translate/rewrite) to apache2 -t: the argument
// line (quotes, escaped spaces, the flags' brackets), every flag and its
// values, the condition pattern types, the patterns PCRE refuses,
// RewriteBase's and RewriteMap's checks. A line Apache refuses is refused
// with its message at its line; one it takes loads (with
// forward_unfaithful: orderly does not evaluate mod_rewrite yet).
func TestRewriteSyntaxMatchesApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, _ := allModules(t, p)
	server := []string{
		"RewriteRule ^a",
		"RewriteRule",
		"RewriteRule ^a b [L",
		"RewriteRule ^a b L]",
		"RewriteRule ^a b ''",
		`RewriteRule ^a b "[L"`,
		"RewriteRule ^a b [L] extra",
		"RewriteRule ^a b [L,X]",
		"RewriteRule ^a b [F]",
		"RewriteRule ^a b [f,nc]",
		"RewriteRule ^a b [R=999]",
		"RewriteRule ^a b [R=99]",
		"RewriteRule ^a b [R=200]",
		"RewriteRule ^a b [R=418]",
		"RewriteRule ^a b [R=425]",
		"RewriteRule ^a b [R=299]",
		"RewriteRule ^a b [R=309]",
		"RewriteRule ^a b [R=500]",
		"RewriteRule ^a b [R=permanent]",
		"RewriteRule ^a b [R=foo]",
		"RewriteRule ^a b [R=]",
		"RewriteRule ^a b [redirect=301,last]",
		"RewriteRule ^a b [BNE]",
		"RewriteRule ^a b [BNE=]",
		"RewriteRule ^a b [BNE=/]",
		"RewriteRule ^a b [L,,F]",
		"RewriteRule ^a b [L, ,F]",
		"RewriteRule ^a b []",
		"RewriteRule ^a b [ ]",
		"RewriteRule ^a b [ L , F ]",
		`RewriteRule ^a b "[ L , F ]"`,
		`RewriteRule ^a b "[L,  ,F,G]"`,
		`RewriteRule ^a b "[L, ,F]"`,
		`RewriteRule ^a b "[ ]"`,
		`RewriteRule ^a b '[L,X ]'`,
		"RewriteRule (a b [L]",
		"RewriteRule !(a b",
		`RewriteRule "^a b" c [NC]`,
		`RewriteRule '^a b' c`,
		`RewriteRule "^a b c`,
		`RewriteRule ^a\ b c`,
		"RewriteRule ^a b [DX]",
		"RewriteRule ^a b [Dunno]",
		"RewriteRule ^a b [E=x:1,CO=a:b:c,S=2,N=5,T=text/plain,H=foo,QSA,QSD,QSL,END,PT,NS,NE,DPI,B,BNP,BCTLS,UNC,UnsafePrefixStat,UnsafeAllow3F]",
		"RewriteRule ^a b [qsappend,NoCase,chain,noescape,nosubreq,passthrough,skip=1,type=x,handler=y,env=z,cookie=c:d:e,next,end,gone,forbidden,backrefnoplus,discardpath,qsdiscard,qslast]",
		"RewriteRule ^a b [Zzz]",
		"RewriteRule ^a b [Last2]",
		"RewriteRule ^a b [=x]",
		"RewriteRule ^a b [L=1]",
		"RewriteRule ^a b [BX]",
		"RewriteRule ^a b [Cx]",
		"RewriteRule ^a b [Ex]",
		"RewriteRule ^a b [Nx]",
		"RewriteRule ^a b [Px]",
		"RewriteRule ^a b [Qx]",
		"RewriteRule ^a b [Ux]",
		"RewriteRule ^a b?",
		"RewriteRule ^(?<n>a)(?<n>b) c",
		"RewriteRule ^a[ b",
		"RewriteCond %{HTTP_HOST}",
		"RewriteCond a b [X]",
		"RewriteCond a (b",
		"RewriteCond a !(b [NC]",
		"RewriteCond a b [NC,OR,NV]",
		"RewriteCond a b [nocase,ornext,novary]",
		"RewriteCond a -f [NC]",
		"RewriteCond a !-lt5",
		"RewriteCond a -lt",
		"RewriteCond a -zz",
		`RewriteCond a =""`,
		"RewriteCond a >=(",
		"RewriteCond a <(",
		"RewriteCond a =(",
		"RewriteCond a -eq(",
		"RewriteCond a -x(",
		"RewriteCond a b c",
		"RewriteCond a b [NC",
		"RewriteCond a b [NC,]",
		"RewriteCond a b [,NC]",
		"RewriteBase /x",
		"RewriteMap m int:nope",
		"RewriteMap m int:tolower",
		"RewriteMap m int:ToLower",
		"RewriteMap m txt:/nonexistent/map.txt",
		"RewriteMap m rnd:/nonexistent/map.txt",
		"RewriteMap m /nonexistent/map.txt",
		"RewriteMap m prg:/nonexistent/prog arg",
		"RewriteOptions Inherit Nope",
	}
	dir := []string{
		"RewriteBase x",
		`RewriteBase ""`,
		"RewriteBase /app/",
		"RewriteRule ^a b [L,X]",
		"RewriteCond a (b",
	}
	var texts []string
	for _, l := range server {
		texts = append(texts, l+"\n")
	}
	for _, l := range dir {
		texts = append(texts, "<Directory /srv>\n"+l+"\n</Directory>\n")
	}
	refused, started := 0, 0
	for _, text := range texts {
		apache, ours := refusals(t, p, load, text)
		switch {
		case strings.HasPrefix(apache, "(starts") && ours == "(loads)":
			started++
		case apache != ours:
			t.Errorf("%q:\n apache2: %s\n orderly: %s", text, apache, ours)
		default:
			refused++
		}
	}
	t.Logf("%d lines: %d refused by both with the same message, %d loaded by both", len(texts), refused, started)
	if refused < 40 || started < 20 {
		t.Errorf("%d refused, %d loaded: the test proves too little", refused, started)
	}
}
