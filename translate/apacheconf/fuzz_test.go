package apacheconf

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// seedFiles returns the configuration files under testdata.
func seedFiles(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path, filepath.Join("testdata", "fuzz")) {
			return err
		}
		data, err := os.ReadFile(path)
		files[filepath.ToSlash(path)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func FuzzParse(f *testing.F) {
	for _, src := range seedFiles(f) {
		f.Add(src)
	}
	f.Add([]byte("Foo a\\\\\n\nb\r\n<A \"x\\\"y\">\n\"</A>\"\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		ds, err := Parse("f.conf", src)
		if err != nil {
			if _, ok := err.(ErrorList); !ok {
				t.Fatalf("Parse error is a %T, want ErrorList", err)
			}
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		Walk(ds, func(d *Directive, _ []*Directive) error {
			if d.Pos.File != "f.conf" || d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 {
				t.Fatalf("%s %q: bad position %+v", d.Name, d.Args, d.Pos)
			}
			if d.LowerName() != strings.ToLower(d.Name) {
				t.Fatalf("%q: LowerName() = %q", d.Name, d.LowerName())
			}
			if want := strings.TrimSuffix(d.Name+" "+d.Raw, " "); d.Text() != want {
				t.Fatalf("%q %q: Text() = %q, want %q", d.Name, d.Raw, d.Text(), want)
			}
			if d.IsSection() != (d.Block != nil) {
				t.Fatalf("%s: IsSection() = %v with Block %v", d.Name, d.IsSection(), d.Block)
			}
			return nil
		})
		if err == nil {
			top := slices.ContainsFunc(ds, func(d *Directive) bool { return d.Is("LoadModule") })
			if got := HasTopLevel(src, "LoadModule"); got != top {
				t.Fatalf("HasTopLevel = %v, but the parsed tree says %v", got, top)
			}
		}
		// Lexed in parts (as a big file is, on several cores), the file
		// gives the same tree and errors as read line after line.
		for _, n := range []int{1, 2, 3, 7} {
			q := &parser{file: "f.conf"}
			q.parseParts(string(src), n)
			q.errs.sort()
			if got, want := dumpTree(q.top)+errString(q.errs.Err()), dumpTree(ds)+errString(err); got != want {
				t.Fatalf("lexed in %d parts:\n%s\nline after line:\n%s", n, got, want)
			}
			checkNotes(t, q, n == 1)
		}
		// Read by the loader, the tree is the same walked or not.
		for _, v := range []string{"2.2.34", "2.4.71"} {
			opt := fsOptions(fstest.MapFS{"a.conf": {Data: []byte("A a\n")}})
			opt.Version = v
			opt.Modules = map[string]bool{"macro_module": true}
			opt.Getenv = func(name string) (string, bool) { return "x", name == "X" }
			if read, walked := readBoth(string(src), opt); read != walked {
				t.Fatalf("%s, read:\n%s\nwalked:\n%s", v, read, walked)
			}
		}
		checkRoundTrip(t, ds)
		again, _ := Parse("f.conf", []byte(Render(ds)))
		if Render(again) != Render(ds) {
			t.Fatalf("Render is not stable:\n%s\n%s", Render(ds), Render(again))
		}
	})
}

// FuzzLoad loads "/httpd.conf" from an archive of files, each after a line
// "-- name --" (the text before the first such line is httpd.conf).
func FuzzLoad(f *testing.F) {
	// One archive of each directory of testdata/load, and one of each
	// bad file with the others of its directory.
	seeds := map[string][]string{}
	for name := range seedFiles(f) {
		dir, _ := strings.CutPrefix(name, "testdata/")
		dir, _, _ = strings.Cut(dir, "/")
		seeds[dir] = append(seeds[dir], name)
	}
	files := seedFiles(f)
	for dir, names := range seeds {
		slices.Sort(names)
		for _, top := range names {
			if !strings.HasSuffix(top, ".conf") {
				continue
			}
			var b bytes.Buffer
			b.Write(files[top])
			for _, name := range names {
				if name != top {
					b.WriteString("-- " + strings.TrimPrefix(name, "testdata/"+dir+"/") + " --\n")
					b.Write(files[name])
				}
			}
			f.Add(b.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, archive []byte) {
		fsys := unpack(archive)
		opt := fsOptions(fsys)
		opt.Defines = map[string]bool{"SSL": true}
		opt.Modules = map[string]bool{"mod_headers.c": true}
		env := map[string]string{"E": "a b", "EMPTY": "", "TAG": "<Directory /x>"}
		opt.Getenv = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
		ds, st, err := LoadState("/httpd.conf", opt)
		if err != nil {
			list, ok := err.(ErrorList)
			if !ok || len(list) == 0 {
				t.Fatalf("Load error is %#v, want a non-empty ErrorList", err)
			}
			for _, e := range list {
				if e.Msg == "" {
					t.Fatalf("error without a message: %+v", e)
				}
			}
		}
		Walk(ds, func(d *Directive, _ []*Directive) error {
			// In 2.4 (mod_version built in) these are always evaluated.
			for _, name := range []string{"Include", "IncludeOptional", "IfModule", "IfDefine", "IfVersion", "IfFile"} {
				if d.Is(name) {
					t.Fatalf("%s: %s left in the tree", d.Pos, d.Name)
				}
			}
			if d.Pos.File == "" || d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("%s: bad position %+v", d.Name, d.Pos)
			}
			for _, p := range d.Trail {
				if p.File == "" || p.Line < 1 || strings.HasPrefix(p.File, "macro '") {
					t.Fatalf("%s at %s: bad trail %v", d.Name, d.Pos, d.Trail)
				}
			}
			return nil
		})
		checkRoundTrip(t, ds)

		// What only 2.4 evaluates aside, 2.2 reads the same.
		if lower := strings.ToLower(string(archive)); !strings.Contains(lower, "${") && !strings.Contains(lower, "if") &&
			!strings.Contains(lower, "macro") && !strings.Contains(lower, "define") && !strings.Contains(lower, "includeoptional") {
			opt.Version = "2.2.34"
			ds22, err22 := Load("/httpd.conf", opt)
			if got, want := dumpTree(ds22)+errString(err22), dumpTree(ds)+errString(err); got != want {
				t.Fatalf("read as 2.2:\n%s\nas 2.4:\n%s", got, want)
			}
		}

		// The top file read as an .htaccess file with the state it left:
		// its tree is not changed.
		if src, err := fs.ReadFile(fsys, "httpd.conf"); err == nil {
			hds, _ := Parse("/httpd.conf", src)
			before := dumpTree(hds)
			Conditionals(hds, Options{State: st, Stat: opt.Stat, Getenv: opt.Getenv})
			if after := dumpTree(hds); after != before {
				t.Fatalf("Conditionals changed its input:\n%s\nwas:\n%s", after, before)
			}
		}
	})
}

// checkNotes checks what the parser p noted for the loader (parser.walk,
// parser.execs) against its tree: a tree with a directive to evaluate is
// walked; one without has its LoadModule, Define, UnDefine and top
// ServerRoot directives executed, in order. Unless exact, p may have the
// tree walked for nothing (a part cannot tell where a ServerRoot is).
func checkNotes(t *testing.T, p *parser, exact bool) {
	t.Helper()
	walk, execs := false, []*Directive(nil)
	Walk(p.top, func(d *Directive, parents []*Directive) error {
		switch k := kindOf(d.LowerName()); {
		case k == evaluated:
			walk = true
		case d.IsSection():
		case k == executed, k == rooted && len(parents) == 0:
			execs = append(execs, d)
		}
		return nil
	})
	if p.walk != walk && (exact || !p.walk) {
		t.Fatalf("walk = %v, want %v", p.walk, walk)
	}
	if !p.walk && !slices.Equal(p.execs, execs) {
		t.Fatalf("execs = %s, want %s", dumpTree(p.execs), dumpTree(execs))
	}
}

// readBoth reads src as a loader's top file /f.conf with opt twice: with
// readText, and with its tree walked (expand), every line searched for
// ${NAME} references; it returns what each leaves: the tree, the errors,
// the warnings and the state.
func readBoth(src string, opt Options) (read, walked string) {
	leaves := func(walk bool) string {
		l, err := newLoader(opt, false)
		if err != nil {
			return err.Error()
		}
		l.root = "/"
		f := frame{file: "/f.conf"}
		var ds []*Directive
		if walk {
			p := &parser{file: f.file}
			p.parse(src)
			l.errs = append(l.errs, p.errs...)
			ds = l.expand(p.top, f)
		} else {
			ds = l.readText(src, f)
		}
		l.finish()
		s := l.state()
		return dumpTree(ds) + errString(l.errs.Err()) + "\n" + errString(ErrorList(l.warns).Err()) + "\n" +
			fmt.Sprint(s.root, s.defines, s.vars, s.modules, len(s.macros), s.anyMacro)
	}
	return leaves(false), leaves(true)
}

// unpack returns the files of an archive for FuzzLoad. Names that are not
// valid file system paths are skipped.
func unpack(archive []byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	name, data := "httpd.conf", []byte(nil)
	flush := func() {
		if fs.ValidPath(name) && name != "." {
			fsys[name] = &fstest.MapFile{Data: data}
		}
	}
	for line := range bytes.Lines(archive) {
		if n, ok := bytes.CutPrefix(line, []byte("-- ")); ok {
			if n, ok := bytes.CutSuffix(bytes.TrimRight(n, "\r\n"), []byte(" --")); ok {
				flush()
				name, data = string(n), nil
				continue
			}
		}
		data = append(data, line...)
	}
	flush()
	return fsys
}

// dumpTree writes out everything parsing sets in a tree, to compare trees.
func dumpTree(ds []*Directive) string {
	var b strings.Builder
	Walk(ds, func(d *Directive, parents []*Directive) error {
		fmt.Fprintf(&b, "%d %q %q %q %v %d %q %q %v\n", len(parents), d.Name, d.Args, d.Raw, d.Pos, d.EndLine, d.Text(), d.LowerName(), d.Block != nil)
		return nil
	})
	return b.String()
}
