package apachetest

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"golang.org/x/tools/txtar"
)

func TestIsFrontRule(t *testing.T) {
	tests := []struct {
		name    string
		section bool
		want    bool
	}{
		{"Order", false, true},
		{"allow", false, true},
		{"DENY", false, true},
		{"Satisfy", false, true},
		{"Require", false, true},
		{"AuthType", false, true},
		{"AuthName", false, true},
		{"AuthUserFile", false, true},
		{"AuthGroupFile", false, true},
		{"AuthBasicProvider", false, true},
		{"AuthMerging", false, true},
		{"SSLRequireSSL", false, true},
		{"SSLVerifyClient", false, true},
		{"SSLCACertificateFile", false, true},
		{"RequireAll", true, true},
		{"RequireAny", true, true},
		{"RequireNone", true, true},
		{"LimitRequestBody", false, true},
		{"LimitRequestLine", false, true},
		{"LimitRequestFields", false, true},
		{"LimitRequestFieldSize", false, true},
		{"StrictHostCheck", false, true},
		{"TraceEnable", false, true},
		// The mapping stays.
		{"Alias", false, false},
		{"ScriptAlias", false, false},
		{"Redirect", false, false},
		{"RedirectMatch", false, false},
		{"DirectoryIndex", false, false},
		{"DirectorySlash", false, false},
		{"Options", false, false},
		{"ErrorDocument", false, false},
		{"AcceptPathInfo", false, false},
		{"AddHandler", false, false},
		{"SetHandler", false, false},
		{"DocumentRoot", false, false},
		{"ServerName", false, false},
		{"SetEnvIf", false, false},
		{"AllowOverride", false, false},
		{"AccessFileName", false, false},
		{"VirtualHost", true, false},
		{"Directory", true, false},
		{"Files", true, false},
		{"IfModule", true, false},
		// <Limit> is not one itself: StripAccess keeps its contents.
		{"Limit", true, false},
		{"LimitExcept", true, false},
		// Not in the table: Apache refuses it, the backend too.
		{"Misspelt", false, false},
	}
	for _, tt := range tests {
		if got := IsFrontRule(tt.name, tt.section); got != tt.want {
			t.Errorf("IsFrontRule(%q, %v) = %v, want %v", tt.name, tt.section, got, tt.want)
		}
	}
}

func TestStripAccess(t *testing.T) {
	tests := []struct {
		name      string
		src, want string
		lines     []int
	}{
		{
			name:  "nothing to strip",
			src:   "Alias /a /b\nOptions Indexes\n",
			want:  "Alias /a /b\nOptions Indexes\n",
			lines: nil,
		},
		{
			name:  "compat rules, any case",
			src:   "order allow,deny\nALLOW from all\nOptions -Indexes\nDeny from 10.0.0.1\n",
			want:  "\n\nOptions -Indexes\n\n",
			lines: []int{1, 2, 4},
		},
		{
			name: "inside sections",
			src: `<IfModule mod_alias.c>
    Alias /docs "@EXTRA@/docs"
</IfModule>
<Directory "@EXTRA@/docs">
    Options Indexes
    AuthType Basic
    AuthName "Docs Area"
    AuthUserFile @AUTH@/htpasswd
    Require valid-user
    DirectoryIndex index.html
</Directory>
`,
			want: `<IfModule mod_alias.c>
    Alias /docs "@EXTRA@/docs"
</IfModule>
<Directory "@EXTRA@/docs">
    Options Indexes




    DirectoryIndex index.html
</Directory>
`,
			lines: []int{6, 7, 8, 9},
		},
		{
			name: "an authorization section goes whole",
			src: `<Location /x>
    <RequireAll>
        Require ip 10.0.0.0/8
        Require valid-user
    </RequireAll>
    ErrorDocument 403 /denied.html
</Location>
`,
			want: `<Location /x>




    ErrorDocument 403 /denied.html
</Location>
`,
			lines: []int{2, 3, 4, 5},
		},
		{
			name: "Limit keeps what is not an access rule",
			src: `<Directory /srv>
<Limit GET POST>
    Order deny,allow
    Deny from all
    Options +Indexes
</Limit>
<LimitExcept GET>
    Require valid-user
</LimitExcept>
</Directory>
`,
			want: `<Directory /srv>



    Options +Indexes




</Directory>
`,
			lines: []int{2, 3, 4, 6, 7, 8, 9},
		},
		{
			name:  "continuation lines",
			src:   "Allow from 10.0.0.1 \\\n    10.0.0.2\nRedirect /old /new\n",
			want:  "\n\nRedirect /old /new\n",
			lines: []int{1, 2},
		},
		{
			name:  "request limits",
			src:   "LimitRequestBody 10\nTraceEnable Off\nLimitRequestFields 8\nStrictHostCheck On\nAcceptPathInfo On\n",
			want:  "\n\n\n\nAcceptPathInfo On\n",
			lines: []int{1, 2, 3, 4},
		},
		{
			name:  "TLS requirements",
			src:   "SSLCACertificateFile @TLSCA@\nSSLVerifyClient optional\nSSLOptions +FakeBasicAuth\nSSLRequireSSL\nDirectoryIndex a.html\n",
			want:  "\n\n\n\nDirectoryIndex a.html\n",
			lines: []int{1, 2, 3, 4},
		},
		{
			name:  "CRLF line ends and no final line end",
			src:   "Satisfy any\r\nAddHandler cgi-script .cgi\r\nRequire all granted",
			want:  "\r\nAddHandler cgi-script .cgi\r\n",
			lines: []int{1, 3},
		},
		{
			name:  "comments stay",
			src:   "# Require all denied\nRequire all denied\n",
			want:  "# Require all denied\n\n",
			lines: []int{2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lines, err := StripAccess("legacy.conf", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if !slices.Equal(lines, tt.lines) {
				t.Errorf("lines %v, want %v", lines, tt.lines)
			}
			if _, err := apacheconf.Parse("stripped", got); err != nil {
				t.Errorf("the result does not parse: %v", err)
			}
		})
	}
}

// A file that does not parse is refused by Apache as a whole: it stays.
func TestStripAccessRefused(t *testing.T) {
	src := "<Directory /x>\nRequire all denied\n"
	got, lines, err := StripAccess(".htaccess", []byte(src))
	if err == nil {
		t.Fatal("no error for an unclosed section")
	}
	if string(got) != src || lines != nil {
		t.Errorf("got %q, %v; want the file as it was", got, lines)
	}
}

func TestWithoutAccess(t *testing.T) {
	c, err := ParseCase("x.txtar", []byte(`comment
-- legacy.conf --
AccessFileName .acl
<Directory "@DOCROOT@">
    AllowOverride All
    Order allow,deny
    Allow from all
</Directory>
-- docroot/.acl --
Deny from all
Options -Indexes
-- docroot/sub/.acl --
Require valid-user
-- docroot/.htaccess --
Deny from all
-- docroot/index.html --
Require all denied
-- requests --
GET / 10.0.0.1
`))
	if err != nil {
		t.Fatal(err)
	}
	b := c.WithoutAccess()
	want := map[string]string{
		"docroot/.acl":       "\nOptions -Indexes\n",
		"docroot/sub/.acl":   "\n",
		"docroot/.htaccess":  "Deny from all\n",      // not an access file here: Apache never reads it
		"docroot/index.html": "Require all denied\n", // a document
	}
	for _, f := range b.Files {
		if string(f.Data) != want[f.Name] {
			t.Errorf("%s: got %q, want %q", f.Name, f.Data, want[f.Name])
		}
	}
	if got := string(b.Legacy); got != "AccessFileName .acl\n<Directory \"@DOCROOT@\">\n    AllowOverride All\n\n\n</Directory>\n" {
		t.Errorf("legacy.conf: got %q", got)
	}
	// The case itself is untouched.
	if !strings.Contains(string(c.Legacy), "Allow from all") || string(c.Files[0].Data) != "Deny from all\nOptions -Indexes\n" {
		t.Error("WithoutAccess changed the case it was called on")
	}
}

// Every case of the corpus loses every access rule and request limit,
// and keeps every other directive, in order.
func TestWithoutAccessCorpus(t *testing.T) {
	cases, err := LoadCorpus("../../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	stripped := 0
	for _, c := range cases {
		b := c.WithoutAccess()
		names := []string{".htaccess"}
		if ds, err := apacheconf.Parse(LegacyFile, c.Legacy); err == nil {
			names = accessFileNames(ds)
		}
		before := append([]txtar.File{{Name: LegacyFile, Data: c.Legacy}}, c.Files...)
		after := append([]txtar.File{{Name: LegacyFile, Data: b.Legacy}}, b.Files...)
		for i, f := range before {
			if f.Name != LegacyFile && !slices.Contains(names, path.Base(f.Name)) {
				continue
			}
			ds0, err := apacheconf.Parse(f.Name, f.Data)
			if err != nil {
				continue // Apache refuses it: it stays as it is
			}
			ds1, err := apacheconf.Parse(f.Name, after[i].Data)
			if err != nil {
				t.Errorf("%s: %s: stripped, it does not parse: %v", c.Name, f.Name, err)
				continue
			}
			kept0, front0 := kept(ds0)
			kept1, front1 := kept(ds1)
			stripped += front0
			if front1 != 0 {
				t.Errorf("%s: %s: %d access rules or limits left", c.Name, f.Name, front1)
			}
			if !slices.Equal(kept0, kept1) {
				t.Errorf("%s: %s: the other directives were\n%s\nand are\n%s", c.Name, f.Name, strings.Join(kept0, "\n"), strings.Join(kept1, "\n"))
			}
		}
	}
	if stripped == 0 {
		t.Fatal("no access rule stripped from the corpus")
	}
	t.Logf("%d access rules and request limits stripped from %d cases", stripped, len(cases))
}

// kept lists the directives of ds that are neither front rules nor inside
// one, nor <Limit> or <LimitExcept>, and counts the front rules.
func kept(ds []*apacheconf.Directive) (names []string, front int) {
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		switch {
		case IsFrontRule(d.Name, d.IsSection()):
			front++
			return apacheconf.SkipBlock
		case isLimitSection(d):
		default:
			names = append(names, d.Name+" "+strings.Join(d.Args, " "))
		}
		return nil
	})
	return names, front
}
