package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/convert"
	"github.com/pmezard/go-difflib/difflib"
)

const translateUsage = `usage: orderly translate [-o DIR | -diff] [-keep-compat] [-semantics 2.2|2.4-compat]
                         [-server-root DIR] [-document-root DIR] [-module NAME]... [-D NAME]... httpd.conf...
       orderly translate -backend-guard -orderly-addr ADDR,... [-guard-token-file F] [-o DIR]

Writes the Apache 2.4 configuration of a 2.2 one, or the backend guard: the
2.4 configuration that makes the backend answer only orderly.
`

// cmdTranslate writes the 2.4 configuration of a 2.2 one:
// orderly translate [-o DIR] [-keep-compat] [-semantics 2.2|2.4-compat] httpd.conf...
func cmdTranslate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("translate", translateUsage, stderr)
	out := fs.String("o", "", "directory to write the whole 2.4 tree to, every file read (changed or not), .htaccess and password files, links as in the input, with the same layout (default: print to standard output)")
	diff := fs.Bool("diff", false, "print a unified diff of what translate changes instead of the files")
	keep := fs.Bool("keep-compat", false, "keep mod_access_compat loaded")
	sem := fs.String("semantics", string(translate.Legacy22), `what the legacy rules mean: "2.2" or "2.4-compat"`)
	serverRoot := fs.String("server-root", "", "ServerRoot for relative paths")
	docRoot := fs.String("document-root", "", "DocumentRoot when the files set none")
	var modules, defines listFlag
	fs.Var(&modules, "module", "a module to treat as loaded, by identifier (rewrite_module); repeatable. A configuration without LoadModule lines is otherwise read with Debian's default modules")
	fs.Var(&defines, "D", "a -D name for <IfDefine>; repeatable")
	guard := addGuardFlags(fs) // guard.go
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	guardText, err := guard.config()
	if err != nil {
		fmt.Fprintln(stderr, "translate:", err)
		return 2
	}
	if fs.NArg() == 0 && guardText != "" {
		if err := guard.write(guardText, *out, false, stdout); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
		return 0
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: orderly translate [-o DIR] [-keep-compat] [-semantics 2.2|2.4-compat] httpd.conf...\n       orderly translate -backend-guard -orderly-addr ADDR[,ADDR...] [-guard-token-file F] [-trusted-proxies ADDR,...] [-o DIR] [httpd.conf...]")
		return 2
	}
	s := translate.Semantics(*sem)
	if s != translate.Legacy22 && s != translate.Compat24 {
		fmt.Fprintf(stderr, "translate: -semantics %q: want \"2.2\" or \"2.4-compat\"\n", *sem)
		return 2
	}
	var files []string
	for _, f := range fs.Args() {
		// Absolute, so that included files land beside them under -o.
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		files = append(files, f)
	}
	dr := *docRoot
	if dr == "" {
		dr = "/var/www/html"
	}
	conv, err := convert.Convert(files, convert.Options{
		LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: s, ServerRoot: *serverRoot, DocumentRoot: dr, ForwardUnfaithful: true},
			Modules: modules, Defines: defines.set()},
		KeepCompat: *keep,
	})
	if err != nil {
		printErrs(stderr, err)
		return 2
	}
	base := commonDir(files)
	switch {
	case *diff:
		if err := printDiff(stdout, base, conv); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
	case *out == "":
		for _, f := range sortedKeys(conv.Files) {
			fmt.Fprintf(stdout, "# ==== %s\n", f)
			stdout.Write(conv.Files[f])
		}
	default:
		if err := writeTree(*out, base, conv); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
	}
	if guardText != "" {
		if err := guard.write(guardText, *out, true, stdout); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
	}
	for _, r := range conv.Reviews {
		fmt.Fprintf(stderr, "%s: DIR-10 needs review: %s\n", r.Pos, r.Text)
	}
	if len(conv.CompatKept) > 0 {
		fmt.Fprintf(stderr, "translate: mod_access_compat stays loaded: Order/Allow/Deny left as they are in %s\n", strings.Join(conv.CompatKept, ", "))
	}
	fmt.Fprintf(stderr, "translate: %d sections translated, %d left for review, %d directives renamed or removed\n", conv.Changes-len(conv.Reviews), len(conv.Reviews), conv.Renamed)
	return 0
}

func commonDir(files []string) string {
	if len(files) == 0 {
		return "."
	}
	d := filepath.Dir(files[0])
	for _, f := range files[1:] {
		for !strings.HasPrefix(filepath.Dir(f)+"/", d+"/") && d != "/" && d != "." {
			d = filepath.Dir(d)
		}
	}
	return d
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// treePath is where a file of the input goes under the output directory:
// at its place relative to the configuration's directory, or, outside it
// (an .htaccess file under a document root, a password file), under its
// absolute path.
func treePath(out, base, f string) string {
	rel, err := filepath.Rel(base, f)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		abs, _ := filepath.Abs(f)
		rel = strings.TrimPrefix(abs, "/")
	}
	return filepath.Join(out, rel)
}

// writeTree writes the whole translated tree under out: every
// configuration file read (a symbolic link as a link, with the translated
// text at its target, where the target is relative and inside the tree),
// every .htaccess file, and the data files the configuration names. The
// input is never written to.
func writeTree(out, base string, conv *convert.Conversion) error {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if absOut == base {
		return fmt.Errorf("-o %s: that is the configuration's own directory, which translate never writes to", out)
	}
	// No output file may be an input file (an -o above the tree).
	check := func(src, dst string) error {
		si, err1 := os.Stat(src)
		di, err2 := os.Stat(dst)
		if err1 == nil && err2 == nil && os.SameFile(si, di) {
			return fmt.Errorf("-o %s: %s would overwrite the input %s, which translate never writes to", out, dst, src)
		}
		return nil
	}
	for _, f := range sortedKeys(conv.Files) {
		if err := check(f, treePath(absOut, base, f)); err != nil {
			return err
		}
	}
	for _, f := range sortedKeys(conv.Data) {
		if err := check(f, treePath(absOut, base, f)); err != nil {
			return err
		}
	}
	write := func(dst string, data []byte) error {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if fi, err := os.Lstat(dst); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(dst) // a link an earlier run left: write the file, not through it
		}
		return os.WriteFile(dst, data, 0o644)
	}
	for _, f := range sortedKeys(conv.Files) {
		dst := treePath(absOut, base, f)
		if target, ok := treeLink(base, f); ok {
			// The link as in the input; its target gets the translated
			// text (the same file, read under either name).
			resolved := filepath.Join(filepath.Dir(f), target)
			if _, own := conv.Files[resolved]; !own {
				if err := write(treePath(absOut, base, resolved), conv.Files[f]); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			os.Remove(dst)
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
			continue
		}
		if err := write(dst, conv.Files[f]); err != nil {
			return err
		}
	}
	for _, f := range sortedKeys(conv.Data) {
		if err := write(treePath(absOut, base, f), conv.Data[f]); err != nil {
			return err
		}
	}
	return nil
}

// treeLink reports whether f is a symbolic link to be kept as one: a
// relative link to a file inside the tree (Debian's sites-enabled). An
// absolute link, or one leaving the tree, is written as the file.
func treeLink(base, f string) (string, bool) {
	fi, err := os.Lstat(f)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false
	}
	target, err := os.Readlink(f)
	if err != nil || filepath.IsAbs(target) {
		return "", false
	}
	resolved := filepath.Join(filepath.Dir(f), target)
	if !strings.HasPrefix(resolved, base+"/") {
		return "", false
	}
	if ri, err := os.Stat(resolved); err != nil || !ri.Mode().IsRegular() {
		return "", false
	}
	return target, true
}

// printDiff prints a unified diff of every file translate changes, paths
// relative to the configuration's directory.
func printDiff(w io.Writer, base string, conv *convert.Conversion) error {
	for _, f := range sortedKeys(conv.Files) {
		orig, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if string(orig) == string(conv.Files[f]) {
			continue
		}
		name := strings.TrimPrefix(treePath("", base, f), "/")
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(orig)), B: difflib.SplitLines(string(conv.Files[f])),
			FromFile: "a/" + name, ToFile: "b/" + name, Context: 3,
		})
		if err != nil {
			return err
		}
		io.WriteString(w, text)
	}
	return nil
}
