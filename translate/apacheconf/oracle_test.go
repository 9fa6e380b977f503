package apacheconf_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// TestReadLikeApache reads configurations with Load and with the real
// Apache (apache2 -t -D DUMP_RUN_CFG, which reads a configuration as a
// start does and prints the main server's ErrorLog) and checks that
// they agree: on the ErrorLog the text sets in the end (each case
// sets it through the construct under test), on whether the text is
// refused and with what message, and on the AH00111 warnings. ROOTDIR in
// a case is the directory of the configuration, which is also its
// server root; MODDIR is Apache's module directory.
func TestReadLikeApache(t *testing.T) {
	p := apachetest.Require(t)
	type tcase struct {
		name string
		text string
		env  map[string]string
	}
	var tests []tcase
	add := func(name, text string, env ...string) {
		e := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			e[k] = v
		}
		tests = append(tests, tcase{name, text, e})
	}
	const macro = "LoadModule macro_module MODDIR/mod_macro.so\n"

	// Variables.
	add("Define, any case", "Define FOO ROOTDIR/a\nErrorLog ${foo}")
	add("value with spaces", "Define X \"ErrorLog ROOTDIR/a/x.log\"\n${X}")
	add("Define without value", "Define EMPTY\nErrorLog ROOTDIR/${EMPTY}")
	add("Define without value, environment", "Define EMPTY\nErrorLog ROOTDIR/${EMPTY}", "EMPTY=a")
	add("UnDefine", "Define A ROOTDIR/a\nUnDefine a\nErrorLog ${A}")
	add("UnDefine keeps the name", "Define A 1\nUnDefine a\n<IfDefine A>\nErrorLog ROOTDIR/a/x.log\n</IfDefine>")
	add("redefined", "Define A ROOTDIR/a\nDefine a ROOTDIR/b\nErrorLog ${A}")
	add("Define in a section counts after it", "<VirtualHost *:80>\nDefine D ROOTDIR/b\n</VirtualHost>\nErrorLog ${D}")
	add("odd references", "ErrorLog ROOTDIR/${}${x:y}${X}$${X}${X", "X=1")
	add("environment", "ErrorLog ${R}/a", "R=ROOTDIR")
	add("quoted", "Define A \"a b\"\nErrorLog \"ROOTDIR/${A}\"")
	add("too many words", "Define A \"a b\"\nErrorLog ROOTDIR/${A}")
	add("not a comment", "Define A \"#x\"\n${A} y")
	add("Define errors", "Define A:b 1")
	add("Define arguments", "Define A 1 2")
	add("section from a variable", "Define T IfDefine\n<${T} !NONE>\nErrorLog ROOTDIR/b\n</${T}>")

	// <IfVersion>, on 2.4.71.
	for _, c := range []string{">= 2.4", "= 2.4.71", "== 2.4.71", "2.4.71", "2.4.71 ", `"2.4.71"`, `>= "2.4"`, "> 2.4.70", "> 2.4.71",
		"< 2.4.72", "<= 2.4.71", "!= 2.4.71", "!< 2.4", ">= 2.5", "= 2", "= 2..71", ">= 2.", ">= 99999999999", ">= 4294967298",
		`~ ^2\.4`, `/^2\.4\.71$/`, `= /2.4/`, `!~ ^2\.2`, `~ "^2"`, "", "= 2.4.71.0", "= 2.4x", "!", "a b c d", "=> 2", "~= 2",
		"! 2", ">= 2.4 foo", "= /", "= /2.4", "~ ("} {
		add("IfVersion "+c, "<IfVersion "+c+">\nErrorLog ROOTDIR/a/x.log\n</IfVersion>")
	}
	add("IfVersion text after >", "<IfVersion = 2.4 >x\nErrorLog ROOTDIR/a/x.log\n</IfVersion>")

	// Conditional sections.
	add("IfFile relative", "<IfFile httpd.conf>\nErrorLog ROOTDIR/a/x.log\n</IfFile>")
	add("IfFile missing", "<IfFile !/nonexistent>\nErrorLog ROOTDIR/a/x.log\n</IfFile>")
	add("IfFile quoted", "<IfFile \"ROOTDIR/a\">\nErrorLog ROOTDIR/a/x.log\n</IfFile>")
	add("IfFile no argument", "<IfFile>\n</IfFile>")
	add("IfModule words after", "<IfModule mod_version.c foo>\nErrorLog ROOTDIR/a/x.log\n</IfModule>")
	add("IfModule ! apart", "<IfModule ! mod_rewrite.c>\nErrorLog ROOTDIR/a/x.log\n</IfModule>")
	add("IfModule quoted !", "<IfModule \"!mod_rewrite.c\">\nErrorLog ROOTDIR/a/x.log\n</IfModule>")
	add("IfDirective", "<IfDirective ErrorLog>\nErrorLog ROOTDIR/a/x.log\n</IfDirective>")
	add("IfDirective section", "<IfDirective <Directory>\nErrorLog ROOTDIR/a/x.log\n</IfDirective>")
	add("IfSection", "<IfSection Directory>\nErrorLog ROOTDIR/a/x.log\n</IfSection>")
	add("IfSection with <", "<IfSection <Directory>\nErrorLog ROOTDIR/a/x.log\n</IfSection>")
	add("IfDirective unknown", "<IfDirective NoSuchDirective>\nErrorLog ROOTDIR/a/x.log\n</IfDirective>")

	// mod_macro.
	add("macro", macro+"<Macro Doc $d>\nErrorLog $d\n</Macro>\nUse doc ROOTDIR/a")
	add("macro %", macro+"<Macro Doc %d>\nErrorLog \"ROOTDIR/%d\"\n</Macro>\nUse doc \"a b\"")
	add("macro @", macro+"<Macro Doc @d>\nErrorLog @d\n</Macro>\nUse doc \"ROOTDIR/a b\"")
	add("macro @ rescanned", macro+"<Macro X @a $b>\nErrorLog ROOTDIR/@a$b\n</Macro>\nUse X \\\\\\\\$b Z")
	add("macro arguments", macro+"<Macro Doc $d>\nErrorLog $d\n</Macro>\nUse doc ROOTDIR/a x")
	add("macro arguments from ${}", macro+"<Macro Doc $d>\nErrorLog $d\n</Macro>\nUse doc ${D}", "D=ROOTDIR/a x")
	add("macro variables at use", macro+"Define V a\n<Macro Doc>\nErrorLog ROOTDIR/${V}\n</Macro>\nDefine V b\nUse doc")
	add("macro nested definition", macro+"<Macro Outer $n>\n<Macro Inner>\nErrorLog ROOTDIR/$n\n</Macro>\n</Macro>\nUse Outer b\nUse inner")
	add("macro recursion", macro+"<Macro A>\nUse B\n</Macro>\n<Macro B>\nUse A\n</Macro>\nUse A")
	add("macro undefined", macro+"<Macro A>\nErrorLog ROOTDIR/a/x.log\n</Macro>\nUndefMacro a\nUse A")
	add("macro none", macro+"Use A")
	add("macro same argument", macro+"<Macro Doc $d $d>\nErrorLog $d\n</Macro>")
	add("macro empty", macro+"<Macro Doc $d>\n</Macro>\nUse doc x\nErrorLog ROOTDIR/b")
	add("macro without mod_macro", "<Macro Doc>\nErrorLog ROOTDIR/a/x.log\n</Macro>")

	known := func(name string, section bool) bool {
		if section {
			return strings.EqualFold(name, "Directory")
		}
		return strings.EqualFold(name, "ErrorLog")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, sub := range []string{"a", "b", "a b"} {
				if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fill := strings.NewReplacer("ROOTDIR", dir, "MODDIR", p.ModulesDir)
			conf := filepath.Join(dir, "httpd.conf")
			text := fill.Replace("ServerRoot ROOTDIR\nPidFile ROOTDIR/pid\nErrorLog ROOTDIR/error.log\nServerName localhost\n" +
				"LoadModule mpm_event_module MODDIR/mod_mpm_event.so\n" + tc.text + "\n")
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			cmd := exec.Command(p.Apache, "-f", conf, "-t", "-D", "DUMP_RUN_CFG")
			cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/bin"}
			for k, v := range tc.env {
				env[k] = fill.Replace(v)
				cmd.Env = append(cmd.Env, k+"="+env[k])
			}
			out, runErr := cmd.CombinedOutput()
			apache := string(out)

			var warns []string
			ds, err := apacheconf.Load(conf, apacheconf.Options{
				Known:  known,
				Getenv: func(name string) (string, bool) { v, ok := env[name]; return v, ok },
				Warn:   func(e *apacheconf.Error) { warns = append(warns, e.Msg) },
			})
			// What Apache says of the directives once read ("Invalid
			// command", an argument count) is for Load's callers to say:
			// the tree must hold the directive.
			after := func(name string) bool {
				found := false
				apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
					n := d.Name
					if d.IsSection() {
						n = "<" + n
					}
					found = found || n == name || name == "ErrorLog" && d.Is("ErrorLog") && len(d.Args) != 1
					return nil
				})
				return found
			}
			if runErr != nil {
				m := regexp.MustCompile(`Syntax error on line \d+ of [^\n]*:\n(.*)|Syntax error on line \d+ of [^:]*: (.*)$`).FindStringSubmatch(strings.TrimSpace(apache))
				if m == nil {
					t.Fatalf("Apache fails otherwise than on a syntax error:\n%s", apache)
				}
				msg := m[1] + m[2]
				switch {
				case strings.HasPrefix(msg, "Invalid command '"):
					name, _, _ := strings.Cut(strings.TrimPrefix(msg, "Invalid command '"), "'")
					if err != nil || !after(name) {
						t.Errorf("Apache says %q; Load: %v, tree without %s", msg, err, name)
					}
				case strings.HasPrefix(msg, "ErrorLog takes one argument"):
					if err != nil || !after("ErrorLog") {
						t.Errorf("Apache says %q; Load: %v, no such ErrorLog", msg, err)
					}
				case err == nil:
					t.Errorf("Apache refuses it, Load does not:\n%s", apache)
				case !strings.Contains(msg, err.(apacheconf.ErrorList)[0].Msg):
					t.Errorf("Load's error %q is not Apache's %q", err.(apacheconf.ErrorList)[0].Msg, msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load refuses what Apache reads: %v\n%s", err, apache)
			}
			m := regexp.MustCompile(`(?m)^Main ErrorLog: "(.*)"$`).FindStringSubmatch(apache)
			if m == nil {
				t.Fatalf("no ErrorLog in Apache's output:\n%s", apache)
			}
			got := ""
			for _, d := range ds {
				if d.Is("ErrorLog") && len(d.Args) == 1 {
					got = d.Args[0]
					if !filepath.IsAbs(got) {
						got = filepath.Join(dir, got)
					}
				}
			}
			if got != m[1] {
				t.Errorf("ErrorLog %q, Apache's %q", got, m[1])
			}
			if a, l := strings.Count(apache, "AH00111"), strings.Count(strings.Join(warns, "\n"), "AH00111"); a != l {
				t.Errorf("%d AH00111 warnings, Apache's %d:\n%s", l, a, apache)
			}
		})
	}
}
