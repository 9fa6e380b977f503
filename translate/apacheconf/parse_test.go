package apacheconf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// dump prints a tree one directive a line: position, name (sections with a
// '<'), the arguments quoted, and the Include trail if any.
func dump(ds []*Directive) string {
	var b strings.Builder
	Walk(ds, func(d *Directive, parents []*Directive) error {
		b.WriteString(strings.Repeat("  ", len(parents)))
		pos := fmt.Sprintf("%d:%d", d.Pos.Line, d.Pos.Col)
		if d.Pos.File != "t.conf" {
			pos = d.Pos.String()
		}
		name := d.Name
		if d.IsSection() {
			name = "<" + name
		}
		fmt.Fprintf(&b, "%s %s", pos, name)
		for _, a := range d.Args {
			fmt.Fprintf(&b, " %q", a)
		}
		for _, t := range d.Trail {
			fmt.Fprintf(&b, " <- %s", t)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

func TestGetWord(t *testing.T) {
	tests := []struct {
		in         string
		word, rest string
	}{
		{"", "", ""},
		{"   ", "", ""},
		{"a b", "a", "b"},
		{"  a \t b  ", "a", "b  "},
		{`"a b" c`, "a b", "c"},
		{`'a b' c`, "a b", "c"},
		{`"a"b`, "a", "b"},       // a quoted word ends at its quote
		{`a"b c"`, `a"b`, `c"`},  // quotes inside a word are literal
		{`"a\"b"`, `a"b`, ""},    // escaped quote
		{`'a\'b'`, `a'b`, ""},    // escaped quote, single
		{`'a\"b'`, `a\"b`, ""},   // only the word's own quote is escaped
		{`"a\b"`, `a\b`, ""},     // other backslashes are literal
		{`"a\\b"`, `a\b`, ""},    // `\\` is one backslash
		{`"a\\"`, `a\`, ""},      // ... even before the closing quote
		{`"a\\\"b"`, `a\"b`, ""}, // `\\` then `\"`
		{`a\\b`, `a\b`, ""},      // `\\` unquoted too
		{`a\\\b`, `a\\b`, ""},    // pairs from the left
		{`a\"b`, `a\"b`, ""},     // no quote escapes unquoted
		{`a\`, `a\`, ""},         // a lone trailing backslash
		{`"unterminated x`, "unterminated x", ""},
		{`"ends in \"`, `ends in "`, ""},
		{`"ends in \\`, `ends in \`, ""},
		{`"" x`, "", "x"},
		{"a\vb\fc", "a", "b\fc"},
		{"\xa0a\xa0 b", "\xa0a\xa0", "b"}, // only C-locale white space separates
	}
	for _, tt := range tests {
		word, rest := getWord(tt.in)
		if word != tt.word || rest != tt.rest {
			t.Errorf("getWord(%q) = %q, %q; want %q, %q", tt.in, word, rest, tt.word, tt.rest)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", ""},
		{"blank", "\n  \n\t\n", ""},
		{"directives",
			"Order allow,deny\nAllow from 10.1 192.168\n",
			"1:1 Order \"allow,deny\"\n2:1 Allow \"from\" \"10.1\" \"192.168\"\n"},
		{"no final newline", "Foo a", "1:1 Foo \"a\"\n"},
		{"indent and column", "   Foo a\n\tBar\n", "1:4 Foo \"a\"\n2:2 Bar\n"},
		{"case kept", "oRdEr Allow,Deny\n", "1:1 oRdEr \"Allow,Deny\"\n"},
		{"comments",
			"# comment\n   # indented comment\nFoo a#b # not a comment\n",
			"3:1 Foo \"a#b\" \"#\" \"not\" \"a\" \"comment\"\n"},
		{"CRLF", "Foo a\r\nBar b\r\n", "1:1 Foo \"a\"\n2:1 Bar \"b\"\n"},
		{"BOM", "\xEF\xBB\xBFFoo a\nBar\n", "1:1 Foo \"a\"\n2:1 Bar\n"},
		{"BOM only at start", "Foo\n\xEF\xBB\xBFBar\n", "1:1 Foo\n2:1 \xEF\xBB\xBFBar\n"},
		{"quoting",
			`Foo "a b" 'c d' "e\"f" 'g\'h' "i\\j" k\\l "" m` + "\n",
			"1:1 Foo \"a b\" \"c d\" \"e\\\"f\" \"g'h\" \"i\\\\j\" \"k\\\\l\" \"\" \"m\"\n"},
		{"quoted name", `"Foo Bar" x` + "\n", "1:1 Foo Bar \"x\"\n"},
		{"empty quoted name is ignored", `"" x` + "\nBar\n", "2:1 Bar\n"},
		{"quoted hash is no comment", `"#x" y` + "\n", "1:1 #x \"y\"\n"},
		{"continuation",
			"Foo a\\\n  b\nBar\n",
			"1:1 Foo \"a\" \"b\"\n3:1 Bar\n"},
		{"continuation joins directly",
			"Fo\\\no x\\\ny\nBar\n",
			"1:1 Foo \"xy\"\n4:1 Bar\n"},
		{"continuation keeps quotes open",
			"Foo \"a \\\n b\" c\n",
			"1:1 Foo \"a  b\" \"c\"\n"},
		{"continuation CRLF", "Foo a\\\r\nb\r\nBar\r\n", "1:1 Foo \"ab\"\n3:1 Bar\n"},
		{"backslash then blank is no continuation",
			"Foo a \\ \nBar\n",
			"1:1 Foo \"a\" \"\\\\\"\n2:1 Bar\n"},
		{"backslash at end of file", "Foo a\\", "1:1 Foo \"a\\\\\"\n"},
		{"continuation at end of file", "Foo a\\\n", "1:1 Foo \"a\"\n"},
		{"continuation into blank line ends it",
			"Foo a\\\n\nBar\n",
			"1:1 Foo \"a\"\n3:1 Bar\n"},
		{"double backslash continues twice (httpd quirk)",
			"Foo a\\\\\n\nb\nBar\n",
			"1:1 Foo \"ab\"\n4:1 Bar\n"},
		{"comment continues",
			"# comment \\\nFoo\nBar\n",
			"3:1 Bar\n"},
		{"continuation before the name",
			"  \\\n   Foo x\nBar\n",
			"2:4 Foo \"x\"\n3:1 Bar\n"},
		{"line numbers after continuations",
			"A \\\n1 \\\n2\n\nB\n  C \\\n  3\nD\n",
			"1:1 A \"1\" \"2\"\n5:1 B\n6:3 C \"3\"\n8:1 D\n"},
		{"section",
			"<Directory \"/var/www\">\n    Order allow,deny\n</Directory>\n",
			"1:1 <Directory \"/var/www\"\n  2:5 Order \"allow,deny\"\n"},
		{"nested sections, close in any case",
			"<VirtualHost *:80>\n<directory /x>\n<Limit GET POST>\nDeny from all\n</LIMIT>\n</Directory>\n</virtualhost>\nAfter\n",
			"1:1 <VirtualHost \"*:80\"\n  2:1 <directory \"/x\"\n    3:1 <Limit \"GET\" \"POST\"\n      4:1 Deny \"from\" \"all\"\n8:1 After\n"},
		{"empty section", "<Location /x>\n</Location>\n", "1:1 <Location \"/x\"\n"},
		{"section without arguments", "<Foo>\n</Foo>\n", "1:1 <Foo\n"},
		{"section without '>' or arguments", "<Foo\n</Foo>\n", "1:1 <Foo\n"},
		{"section arguments end at the last '>'",
			"<Directory /x> ignored\n</Directory> ignored\n<Directory \"/a>b\">\n</Directory>\n",
			"1:1 <Directory \"/x\"\n3:1 <Directory \"/a>b\"\n"},
		{"section with '>' in the first word", "<Foo> a b>\n</Foo>\n", "1:1 <Foo \"a\" \"b\"\n"},
		{"section blank before '>'", "<Foo a  >\n</Foo>\n", "1:1 <Foo \"a\"\n"},
		{"negated IfModule", "<IfModule !mod_x.c>\n</IfModule>\n", "1:1 <IfModule \"!mod_x.c\"\n"},
		{"continued section line",
			"<Directory \\\n /x>\nFoo\n</Directory>\n",
			"1:1 <Directory \"/x\"\n  3:1 Foo\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := Parse("t.conf", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := dump(ds); got != tt.want {
				t.Errorf("Parse(%q):\n%s\nwant:\n%s", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseRaw(t *testing.T) {
	src := "Allow   from 10.1 \t 192.168  \n<Directory  \"/var/www\"  >\n</Directory>\nFoo\n<Bar>\n</Bar>\n"
	ds, err := Parse("t.conf", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	Walk(ds, func(d *Directive, _ []*Directive) error {
		got = append(got, d.Raw)
		return nil
	})
	want := []string{"from 10.1 \t 192.168", `"/var/www"`, "", ""}
	if !slices.Equal(got, want) {
		t.Errorf("Raw = %q, want %q", got, want)
	}
	for i, want := range []bool{false, true, false, true} {
		if got := ds[i].IsSection(); got != want {
			t.Errorf("%s: IsSection() = %v, want %v", ds[i].Name, got, want)
		}
	}
	if !ds[1].IsSection() || ds[1].Block == nil || len(ds[1].Block) != 0 {
		t.Errorf("empty section: Block = %#v, want empty and non-nil", ds[1].Block)
	}
	if !ds[0].Is("ALLOW") || ds[0].Is("Allo") {
		t.Errorf("Is is not a case-insensitive comparison")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // the errors, one a line
		tree      string // the tree despite them
	}{
		{"open without '>'",
			"<Directory /x\nFoo\n</Directory>\n",
			"t.conf:1: <Directory> directive missing closing '>'",
			"1:1 <Directory \"/x\"\n  2:1 Foo\n"},
		{"close without '>'",
			"<Directory /x>\n</Directory foo>\nBar\n",
			"t.conf:2: </Directory> directive missing closing '>'",
			"1:1 <Directory \"/x\"\n3:1 Bar\n"},
		{"mismatch",
			"<Directory /x>\n</Location>\nFoo\n</Directory>\n",
			"t.conf:2: Expected </Directory> but saw </Location>",
			"1:1 <Directory \"/x\"\n  3:1 Foo\n"},
		{"mismatch closes the outer section",
			"<VirtualHost *>\n<Directory /x>\n</VirtualHost>\nFoo\n",
			"t.conf:3: Expected </Directory> but saw </VirtualHost>",
			"1:1 <VirtualHost \"*\"\n  2:1 <Directory \"/x\"\n4:1 Foo\n"},
		{"stray close",
			"Foo\n</Directory>\nBar\n",
			"t.conf:2: </Directory> without matching <Directory> section",
			"1:1 Foo\n3:1 Bar\n"},
		{"stray close without '>'",
			"</Directory\n",
			"t.conf:1: </Directory> without matching <Directory> section",
			""},
		{"not closed",
			"<Directory /x>\n  <Location /y>\nFoo\n",
			"t.conf:1: <Directory> was not closed.\nt.conf:2: <Location> was not closed.",
			"1:1 <Directory \"/x\"\n  2:3 <Location \"/y\"\n    3:1 Foo\n"},
		{"line after continuation",
			"Foo \\\n b\n</X>\n",
			"t.conf:3: </X> without matching <X> section",
			"1:1 Foo \"b\"\n"},
		{"all errors",
			"</A>\n<B x\n</B>\n<C>\n</D>\n",
			"t.conf:1: </A> without matching <A> section\nt.conf:2: <B> directive missing closing '>'\nt.conf:4: <C> was not closed.\nt.conf:5: Expected </C> but saw </D>",
			"2:1 <B \"x\"\n4:1 <C\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := Parse("t.conf", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse error = %#v, want an ErrorList", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
			if got := dump(ds); got != tt.tree {
				t.Errorf("tree:\n%s\nwant:\n%s", got, tt.tree)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Pos: Pos{"a.conf", 3, 1}, Msg: "bad"}, "a.conf:3: bad"},
		{&Error{Pos: Pos{"a.conf", 3, 1}, Msg: "bad", Trail: []Pos{{"httpd.conf", 12, 1}}}, "a.conf:3: bad (included from httpd.conf:12)"},
		{&Error{Pos: Pos{"b.conf", 1, 1}, Msg: "bad", Trail: []Pos{{"httpd.conf", 12, 1}, {"a.conf", 2, 5}}}, "b.conf:1: bad (included from a.conf:2, httpd.conf:12)"},
		{&Error{Pos: Pos{File: "a.conf"}, Msg: "bad"}, "a.conf: bad"},
		{&Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	list := ErrorList{
		{Pos: Pos{"b.conf", 1, 1}, Msg: "b1"},
		{Pos: Pos{"a.conf", 9, 1}, Msg: "a9"},
		{Pos: Pos{"a.conf", 10, 1}, Msg: "a10"},
	}
	if got, want := list.Error(), "a.conf:9: a9\na.conf:10: a10\nb.conf:1: b1"; got != want {
		t.Errorf("ErrorList.Error() = %q, want %q", got, want)
	}
	if list[0].Msg != "b1" {
		t.Errorf("ErrorList.Error sorted the list in place")
	}
	if err := ErrorList(nil).Err(); err != nil {
		t.Errorf("empty ErrorList.Err() = %v, want nil", err)
	}
	if err := list.Err(); err == nil {
		t.Errorf("ErrorList.Err() = nil")
	}
}

func TestWalk(t *testing.T) {
	ds, err := Parse("t.conf", []byte("A\n<B>\nC\n<D>\nE\n</D>\nF\n</B>\n<G>\nH\n</G>\nI\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = Walk(ds, func(d *Directive, parents []*Directive) error {
		var path []string
		for _, p := range parents {
			path = append(path, p.Name)
		}
		got = append(got, strings.Join(append(path, d.Name), "/"))
		if d.Name == "G" {
			return SkipBlock
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A", "B", "B/C", "B/D", "B/D/E", "B/F", "G", "I"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk visited %q, want %q", got, want)
	}

	stop := errors.New("stop")
	n := 0
	err = Walk(ds, func(d *Directive, _ []*Directive) error {
		n++
		if d.Name == "E" {
			return stop
		}
		return nil
	})
	if err != stop || n != 5 {
		t.Errorf("Walk stopped with %v after %d calls, want %v after 5", err, n, stop)
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"Order allow,deny\n", "Order allow,deny\n"},
		{"<Directory \"/var/www\">\nAllow from all\n</Directory>\n",
			"<Directory /var/www>\n    Allow from all\n</Directory>\n"},
		{`Foo "a b" "" 'x"y' "x'\"y" "#" a\b`,
			`Foo "a b" "" x"y x'"y # a\b` + "\n"},
		{`Foo "'x" '"y' "'\"z"`, `Foo "'x" '"y' "'\"z"` + "\n"},
		{`"#x" y`, `"#x" y` + "\n"},
		{`Foo "a\\"`, `Foo "a\\"` + "\n"},
		{`Foo a\\\\b "\\" c`, `Foo a\\\b \ c` + "\n"},
		{`Foo "\\\\" x`, `Foo \\\ x` + "\n"},
		{`RewriteRule ^(.*)\.html$ "/x y"`, `RewriteRule ^(.*)\.html$ "/x y"` + "\n"},
		{"<Foo> a>\n</Foo>\n", "<Foo a>\n</Foo>\n"},
		{"<Foo>> a>\n</Foo>>\n", "<Foo>> a>\n</Foo>>\n"},
		{"<Foo>>\n</Foo>>\n", "<Foo>>\n</Foo>>\n"},
		{"\"<a b>\"\n\"</a b>\"\n", "\"<a b>\"\n\"</a b>\"\n"},
		{"<>\n</>\n", "<>\n</>\n"},
		{"< x>\n</>\n", "< x>\n</>\n"},
		{"<F\\\\\\o x>\n</F\\\\\\o>\n", "<F\\\\\\o> x>\n</F\\\\\\o>\n"},
		{"<A>\n<B>\n</B>\n</A>\n", "<A>\n    <B>\n    </B>\n</A>\n"},
	}
	for _, tt := range tests {
		ds, err := Parse("t.conf", []byte(tt.src))
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		got := Render(ds)
		if got != tt.want {
			t.Errorf("Render(Parse(%q)) =\n%s\nwant\n%s", tt.src, got, tt.want)
		}
		checkRoundTrip(t, ds)
	}
}

// checkRoundTrip checks that Parse reads Render(ds) back as ds.
func checkRoundTrip(t *testing.T, ds []*Directive) {
	t.Helper()
	text := Render(ds)
	again, err := Parse("render.conf", []byte(text))
	if err != nil {
		t.Fatalf("Parse(Render(tree)): %v\nrendered:\n%s", err, text)
	}
	if !sameTree(ds, again) {
		t.Fatalf("Parse(Render(tree)) differs\nrendered:\n%s\nfirst:\n%s\nagain:\n%s", text, dump(ds), dump(again))
	}
}

// sameTree compares names, arguments and nesting.
func sameTree(a, b []*Directive) bool {
	return slices.EqualFunc(a, b, func(x, y *Directive) bool {
		return x.Name == y.Name && slices.Equal(x.Args, y.Args) &&
			x.IsSection() == y.IsSection() && sameTree(x.Block, y.Block)
	})
}

func TestHasTopLevel(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"LoadModule a_module a.so\n", true},
		{"  loadmodule a_module a.so\n", true},
		{"# LoadModule a_module a.so\n", false},
		{"<IfModule x>\nLoadModule a_module a.so\n</IfModule>\n", false},
		{"<IfModule x>\n</IfModule>\nLoadModule a_module a.so\n", true},
		{"\"<IfModule\" x>\nLoadModule a_module a.so\n</IfModule>\n", false},
		{"Foo \\\nLoadModule a_module a.so\n", false},
		{"LoadModules x\nInclude mods.conf\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := HasTopLevel([]byte(tt.src), "LoadModule"); got != tt.want {
			t.Errorf("HasTopLevel(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

// TestParseParts reads texts in parts, each lexed into a tree of its own
// and put together after, as a big file is on several cores: the tree and
// the errors must be those of the text read line after line, whether a
// part closes sections of an earlier one, leaves some open to a later one,
// or closes with a tag only the whole tree can match (a tangled part,
// read again with the text).
func TestParseParts(t *testing.T) {
	tests := []struct{ name, src string }{
		{"flat", "A 1\nB 2\nC 3\nD 4\nE 5\nF 6\n"},
		{"sections", "<V 1>\nA\n<D x>\nB\n</D>\n</V>\n<V 2>\nC\n</V>\nE\n"},
		{"open across parts", "<V 1>\n<D x>\n<L y>\nA\nB\nC\n</L>\nD\nE\n</D>\nF\n</V>\nG\n"},
		{"open at the end", "<V 1>\nA\n<D x>\nB\nC\nD\n"},
		{"stray tags", "</X>\nA\n</Y>\n<V>\nB\n</V>\n</Z>\nC\n"},
		{"wrong tag, closing an earlier part's", "<V 1>\nA\nB\nC\nD\n<D x>\nE\n</V>\nF\n"},
		{"wrong tag, closing nothing", "<V 1>\nA\nB\nC\n<D x>\nE\n</X>\nF\n</D>\n</V>\n"},
		{"wrong tag, closing its own", "<V 1>\n<D x>\n<L>\nA\n</D>\nB\n</V>\nC\n"},
		{"unclosed tag", "<V 1>\nA\nB\n</V\nC\n</V>\nD\n"},
		{"odd closing lines", "<V 1>\nA\nB\nC\n</v> x\nD\n<${T}>\nE\n</${T}>\n"},
		{"continuations", "<V 1>\\\n x>\nA\\\n\nB\\\\\n\nC\n</V>\\\n\nD\n"},
		{"executed", "LoadModule a b\n<V>\nDefine X\nServerRoot /a\n</V>\nServerRoot /b\nUnDefine X\n<LoadModule x>\n</LoadModule>\nloadMODULE c d\n"},
		{"ServerRoot in a section of an earlier part", "<V>\nA\nB\nC\nD\nServerRoot /a\nE\nF\n</V>\nServerRoot /b\n"},
		{"evaluated", "A\nB\nC\nD\n<IfModule x>\nE\n</IfModule>\nLoadModule a b\n"},
	}
	for _, tt := range tests {
		want, werr := Parse("f.conf", []byte(tt.src))
		for n := 1; n <= 8; n++ {
			q := &parser{file: "f.conf"}
			q.parseParts(tt.src, n)
			q.errs.sort()
			if got, want := dumpTree(q.top)+errString(q.errs.Err()), dumpTree(want)+errString(werr); got != want {
				t.Errorf("%s, in %d parts:\n%s\nline after line:\n%s", tt.name, n, got, want)
			}
			checkNotes(t, q, n == 1)
		}
	}
}

// TestReadText reads texts as the loader does (readText), a tree with
// nothing to evaluate not walked: what it leaves must be what walking the
// tree leaves.
func TestReadText(t *testing.T) {
	for _, src := range []string{
		"",
		"A 1\n<V>\nB\n</V>\n",
		"LoadModule version_module mod_version.so\n<IfVersion 2.4>\nA\n</IfVersion>\n",
		"LoadModule rewrite_module mod_rewrite.so\nLoadModule\nServerRoot /x\n<V>\nServerRoot /y\n</V>\nServerRoot\n",
		"Define A 1\nDefine B:c\nUnDefine A\nDefine A 2\nUnDefine\n<Define x>\n</Define>\n",
		"Include a.conf\n<Include x>\n</Include>\n",
		"X ${A}\nDefine A 1\nY ${A}\n",
		"X $\\\n{A}\nDefine A 1\nY $\\\n{A}\n",
		"<Macro M $x>\nA $x\n</Macro>\nUse M 1\nUndefMacro M\n",
		"<IfModule !x>\n</ifmodule>\n<IfDefine>\n</IfDefine>\nIfFile x\n",
		// Each directive evaluated, alone.
		"<IfModule x>\nA\n</IfModule>\n", "<IfDefine X>\nA\n</IfDefine>\n", "<IfVersion 2>\nA\n</IfVersion>\n",
		"<IfFile /a.conf>\nA\n</IfFile>\n", "<IfDirective A>\nA\n</IfDirective>\n", "<IfSection A>\nA\n</IfSection>\n",
		"<Macro M>\nA\n</Macro>\n", "Use M\n", "UndefMacro M\n", "Include a.conf\n", "IncludeOptional a.conf\n",
	} {
		for _, v := range []string{"2.2.34", "2.4.71"} {
			opt := fsOptions(fstest.MapFS{"a.conf": {Data: []byte("LoadModule a_module a.so\n")}})
			opt.Version = v
			opt.Modules = map[string]bool{"macro_module": true}
			opt.Getenv = func(string) (string, bool) { return "", false }
			opt.Known = func(string, bool) bool { return true }
			if read, walked := readBoth(src, opt); read != walked {
				t.Errorf("%q as %s, read:\n%s\nwalked:\n%s", src, v, read, walked)
			}
		}
	}
}
