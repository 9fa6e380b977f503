package apacheconf

import (
	"strings"
	"testing"
)

// A ppCase loads /etc/httpd.conf from files (server root /etc) and wants
// the tree, the errors and the warnings. Where a case says "checked",
// apache2 2.4.71 (Debian) was run on the same text (apache2 -t -D
// DUMP_RUN_CFG with the directive under test set a DocumentRoot or an
// ErrorLog) and gave the same result or message.
type ppCase struct {
	name    string
	files   map[string]string
	version string
	env     map[string]string
	known   func(string, bool) bool
	modules map[string]bool
	tree    string
	err     string
	warn    string
}

func (tc ppCase) options() (Options, *[]string) {
	opt := fsOptions(mapFS(tc.files))
	opt.ServerRoot = "/etc"
	opt.Version = tc.version
	opt.Known = tc.known
	opt.Modules = tc.modules
	opt.Getenv = func(name string) (string, bool) {
		v, ok := tc.env[name]
		return v, ok
	}
	var warns []string
	opt.Warn = func(e *Error) { warns = append(warns, e.Error()) }
	return opt, &warns
}

func runPP(t *testing.T, tests []ppCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt, warns := tc.options()
			ds, err := Load("/etc/httpd.conf", opt)
			if got := errString(err); got != tc.err {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tc.err)
			}
			if got := dump(ds); got != tc.tree {
				t.Errorf("tree:\n%s\nwant:\n%s", got, tc.tree)
			}
			if got := strings.Join(*warns, "\n"); got != tc.warn {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tc.warn)
			}
			checkRoundTrip(t, ds)
		})
	}
}

// conf is the one file of a case.
func conf(lines ...string) map[string]string {
	return map[string]string{"etc/httpd.conf": strings.Join(lines, "\n") + "\n"}
}

// iv returns a configuration with <IfVersion cond> around a directive.
func iv(cond string) map[string]string {
	return conf("<IfVersion "+cond+">", "Yes", "</IfVersion>")
}

const yes = "/etc/httpd.conf:2 Yes\n"

func TestIfVersion(t *testing.T) {
	runPP(t, []ppCase{
		// Checked: each holds on 2.4.71 or does not, as here.
		{name: ">=", files: iv(">= 2.4"), tree: yes},
		{name: "= full", files: iv("= 2.4.71"), tree: yes},
		{name: "== full", files: iv("== 2.4.71"), tree: yes},
		{name: "one argument", files: iv("2.4.71"), tree: yes},
		{name: "one argument, then >", files: iv("2.4.71 "), tree: yes},
		{name: "quoted version", files: iv(`"2.4.71"`), tree: yes},
		{name: "operator and quoted version", files: iv(`>= "2.4"`), tree: yes},
		{name: ">", files: iv("> 2.4.70"), tree: yes},
		{name: "> equal", files: iv("> 2.4.71")},
		{name: "<", files: iv("< 2.4.72"), tree: yes},
		{name: "<=", files: iv("<= 2.4.71"), tree: yes},
		{name: "!=", files: iv("!= 2.4.71")},
		{name: "!<", files: iv("!< 2.4"), tree: yes},
		{name: "newer", files: iv(">= 2.5")},
		{name: "major only", files: iv("= 2")},
		{name: "empty part", files: iv("= 2..71")}, // 2.0.71
		{name: "trailing dot", files: iv(">= 2."), tree: yes},
		{name: "atoi of a big number", files: iv(">= 99999999999")}, // 1215752191
		{name: "atoi wraps", files: iv(">= 4294967298"), tree: yes}, // 2
		{name: "regex ~", files: iv(`~ ^2\.4`), tree: yes},
		{name: "regex /re/", files: iv(`/^2\.4\.71$/`), tree: yes},
		{name: "regex = /re/", files: iv(`= /2.4/`), tree: yes},
		{name: "regex !~", files: iv(`!~ ^2\.2`), tree: yes},
		{name: "quoted regex", files: iv(`~ "^2"`), tree: yes},
		{name: "tag in the regex", files: iv(`~ -dev$`), version: "2.4.71-dev", tree: yes},
		{name: "section name in any case", files: conf("<ifversion >= 2>", "Yes", "</IFVERSION>"), tree: yes},
		{name: "nested", files: conf("<IfVersion >= 2.4>", "<IfVersion < 2.4.30>", "No", "</IfVersion>", "<IfVersion >= 2.4.30>", "<Directory /x>", "Yes", "</Directory>", "</IfVersion>", "</IfVersion>"),
			tree: "/etc/httpd.conf:6 <Directory \"/x\"\n  /etc/httpd.conf:7 Yes\n"},
		{name: "inside a section", files: conf("<Directory /x>", "<IfVersion 2.4.71>", "Yes", "</IfVersion>", "</Directory>"),
			tree: "/etc/httpd.conf:1 <Directory \"/x\"\n  /etc/httpd.conf:3 Yes\n"},

		// Checked: httpd's messages.
		{name: "no argument", files: iv(""), err: "/etc/httpd.conf:1: Version appears to be invalid. It must have the format major[.minor[.patch]] where major, minor and patch are numbers."},
		{name: "four parts", files: iv("= 2.4.71.0"), err: "/etc/httpd.conf:1: Version appears to be invalid. It must have the format major[.minor[.patch]] where major, minor and patch are numbers."},
		{name: "not a number", files: iv("= 2.4x"), err: "/etc/httpd.conf:1: Version appears to be invalid. It must have the format major[.minor[.patch]] where major, minor and patch are numbers."},
		{name: "lone !", files: iv("!"), err: "/etc/httpd.conf:1: Version appears to be invalid. It must have the format major[.minor[.patch]] where major, minor and patch are numbers."},
		{name: "too many arguments", files: iv("a b c d"), err: "/etc/httpd.conf:1: <IfVersion takes one, two or three arguments, a comparison operator, a version (and a delimiter)"},
		{name: "bad operator", files: iv("=> 2"), err: "/etc/httpd.conf:1: unrecognized operator '=>'"},
		{name: "~=", files: iv("~= 2"), err: "/etc/httpd.conf:1: unrecognized operator '~='"},
		{name: "! operator", files: iv("! 2"), err: "/etc/httpd.conf:1: unrecognized operator '!'"},
		{name: "third argument", files: iv(">= 2.4 foo"), err: "/etc/httpd.conf:1: <IfVersion> directive missing closing '>'"},
		{name: "text after the >", files: conf("<IfVersion = 2.4 >x", "</IfVersion>"), err: "/etc/httpd.conf:1: <IfVersion> directive missing closing '>'"},
		{name: "lone slash", files: iv("= /"), err: "/etc/httpd.conf:1: Missing delimiting / of regular expression."},
		{name: "unclosed regex", files: iv("= /2.4"), err: "/etc/httpd.conf:1: Missing delimiting / of regular expression."},
		{name: "bad regex", files: iv("~ ("), err: "/etc/httpd.conf:1: Unable to compile regular expression"},
		{name: "not a section", files: conf("IfVersion 2"), err: "/etc/httpd.conf:1: Invalid command 'IfVersion', perhaps misspelled or defined by a module not included in the server configuration"},

		// 2.2: mod_version is a module to load.
		{name: "2.2 without mod_version", files: iv(">= 2.4"), version: "2.2.34",
			tree: "/etc/httpd.conf:1 <IfVersion \">=\" \"2.4\"\n  /etc/httpd.conf:2 Yes\n"},
		{name: "2.2 with mod_version", version: "2.2.34",
			files: conf("LoadModule version_module modules/mod_version.so", "<IfVersion < 2.4>", "Yes", "</IfVersion>", "<IfVersion = 2.2.34>", "Yes", "</IfVersion>", "<IfVersion >= 2.4>", "No", "</IfVersion>"),
			tree:  "/etc/httpd.conf:1 LoadModule \"version_module\" \"modules/mod_version.so\"\n/etc/httpd.conf:3 Yes\n/etc/httpd.conf:6 Yes\n"},
		{name: "2.2 with mod_version from Options", version: "2.2", modules: map[string]bool{"mod_version.c": true}, files: iv("= 2.2.0"), tree: yes},
		{name: "mod_version left out", files: iv(">= 2.4"), modules: map[string]bool{"version_module": false},
			tree: "/etc/httpd.conf:1 <IfVersion \">=\" \"2.4\"\n  /etc/httpd.conf:2 Yes\n"},
	})
}

func TestCondSections(t *testing.T) {
	known := func(name string, section bool) bool {
		if section {
			return strings.EqualFold(name, "Directory")
		}
		return strings.EqualFold(name, "DocumentRoot")
	}
	files := func(lines ...string) map[string]string {
		f := conf(lines...)
		f["etc/there.conf"] = ""
		return f
	}
	runPP(t, []ppCase{
		// Checked: <IfFile> is relative to the server root; '!' negates;
		// quotes are allowed (2.4.35).
		{name: "IfFile relative", files: files("<IfFile there.conf>", "Yes", "</IfFile>"), tree: yes},
		{name: "IfFile absolute", files: files("<IfFile /etc/there.conf>", "Yes", "</IfFile>"), tree: yes},
		{name: "IfFile quoted", files: files(`<IfFile "/etc/there.conf">`, "Yes", "</IfFile>"), tree: yes},
		{name: "IfFile missing", files: files("<IfFile /nonexistent>", "No", "</IfFile>")},
		{name: "IfFile negated", files: files("<IfFile !/nonexistent>", "Yes", "</IfFile>"), tree: yes},
		{name: "IfFile a directory", files: files("<IfFile /etc>", "Yes", "</IfFile>"), tree: yes},
		{name: "IfFile after ServerRoot", files: map[string]string{"etc/httpd.conf": "ServerRoot /srv\n<IfFile there.conf>\nYes\n</IfFile>\n", "srv/there.conf": ""},
			tree: "/etc/httpd.conf:1 ServerRoot \"/srv\"\n/etc/httpd.conf:3 Yes\n"},
		{name: "IfFile no argument", files: files("<IfFile>", "</IfFile>"), err: "/etc/httpd.conf:1: <IfFile> directive requires additional arguments"},
		{name: "IfFile before 2.4.34", version: "2.4.33", files: files("<IfFile there.conf>", "Yes", "</IfFile>"),
			tree: "/etc/httpd.conf:1 <IfFile \"there.conf\"\n  /etc/httpd.conf:2 Yes\n"},
		{name: "IfFile in 2.2", version: "2.2.34", files: files("<IfFile there.conf>", "Yes", "</IfFile>"),
			tree: "/etc/httpd.conf:1 <IfFile \"there.conf\"\n  /etc/httpd.conf:2 Yes\n"},
		{name: "IfFile 2.4.34 takes one word", version: "2.4.34", files: files(`<IfFile "/etc/there.conf">`, "</IfFile>"),
			err: "/etc/httpd.conf:1: <IfFile takes one argument, Container for directives based on existence of files on disk"},

		// Checked, with Apache's own table for Known.
		{name: "IfDirective", known: known, files: conf("<IfDirective documentroot>", "Yes", "</IfDirective>"), tree: yes},
		{name: "IfDirective unknown", known: known, files: conf("<IfDirective RewriteEngine>", "No", "</IfDirective>")},
		{name: "IfDirective negated", known: known, files: conf("<IfDirective !RewriteEngine>", "Yes", "</IfDirective>"), tree: yes},
		{name: "IfDirective of a section", known: known, files: conf("<IfDirective <Directory>", "Yes", "</IfDirective>"), tree: yes},
		{name: "IfSection", known: known, files: conf("<IfSection Directory>", "Yes", "</IfSection>"), tree: yes},
		{name: "IfSection with <", known: known, files: conf("<IfSection <Directory>", "No", "</IfSection>")},
		{name: "IfSection no argument", known: known, files: conf("<IfSection !>", "</IfSection>"), err: "/etc/httpd.conf:1: <IfSection> directive requires additional arguments"},
		{name: "IfDirective without Known", files: conf("<IfDirective DocumentRoot>", "Yes", "</IfDirective>"),
			tree: "/etc/httpd.conf:1 <IfDirective \"DocumentRoot\"\n  /etc/httpd.conf:2 Yes\n"},
		{name: "IfSection in 2.2", version: "2.2.34", known: known, files: conf("<IfSection Directory>", "Yes", "</IfSection>"),
			tree: "/etc/httpd.conf:1 <IfSection \"Directory\"\n  /etc/httpd.conf:2 Yes\n"},

		// <IfModule>'s argument: checked on 2.4.71; 2.4.35's change for
		// the older ones.
		{name: "IfModule words after the name", files: conf("<IfModule mod_version.c foo>", "Yes", "</IfModule>"), tree: yes},
		{name: "IfModule space after !", files: conf("<IfModule ! mod_rewrite.c>", "Yes", "</IfModule>"), tree: yes},
		{name: "IfModule quoted !", files: conf(`<IfModule "!mod_rewrite.c">`, "No", "</IfModule>")},
		{name: "IfModule quoted", files: conf(`<IfModule "mod_so.c">`, "Yes", "</IfModule>"), tree: yes},
		{name: "IfModule quoted before 2.4.35", version: "2.4.34", files: conf(`<IfModule "mod_so.c">`, "</IfModule>"),
			err: "/etc/httpd.conf:1: <IfModule takes one argument, Container for directives based on existence of specified modules"},
		{name: "IfModule two words in 2.2", version: "2.2.34", files: conf("<IfModule mod_so.c foo>", "</IfModule>"),
			err: "/etc/httpd.conf:1: <IfModule takes one argument, Container for directives based on existance of specified modules"},
		{name: "IfDefine in 2.2", version: "2.2.34", files: conf("<IfDefine !X>", "Yes", "</IfDefine>"), tree: yes},
		{name: "IfModule in 2.2: no mod_version", version: "2.2.34", files: conf("<IfModule mod_version.c>", "No", "</IfModule>", "<IfModule log_config_module>", "Yes", "</IfModule>"),
			tree: "/etc/httpd.conf:5 Yes\n"},
		{name: "IfModule, a module left out", modules: map[string]bool{"unixd_module": false}, files: conf("<IfModule mod_unixd.c>", "No", "</IfModule>")},
		{name: "IfModule with its name from ${}", env: map[string]string{"D": "<IfModule version_module>"},
			files: conf("<IfModule ${M}>", "No", "</IfModule>", "<IfModule !${M}>", "Yes", "</IfModule>"),
			warn:  "/etc/httpd.conf:1: AH00111: Config variable ${M} is not defined\n/etc/httpd.conf:4: AH00111: Config variable ${M} is not defined",
			tree:  "/etc/httpd.conf:5 Yes\n"},
	})
}

func TestVariables(t *testing.T) {
	runPP(t, []ppCase{
		// Checked: ${foo} finds FOO's value; a value with spaces makes
		// words, and may make the name; Define NAME alone gives no value.
		{name: "Define's value, any case", files: conf("Define FOO bar", "ErrorLog /x/${foo}.log"),
			tree: "/etc/httpd.conf:1 Define \"FOO\" \"bar\"\n/etc/httpd.conf:2 ErrorLog \"/x/bar.log\"\n"},
		{name: "words", files: conf(`Define X "DocumentRoot /tmp"`, "${X}"),
			tree: "/etc/httpd.conf:1 Define \"X\" \"DocumentRoot /tmp\"\n/etc/httpd.conf:2 DocumentRoot \"/tmp\"\n"},
		{name: "quoted reference keeps one word", files: conf(`Define A "x y"`, `ErrorLog "/x/${A}.log"`),
			tree: "/etc/httpd.conf:1 Define \"A\" \"x y\"\n/etc/httpd.conf:2 ErrorLog \"/x/x y.log\"\n"},
		{name: "Define without value", files: conf("Define EMPTY", "ServerName ${EMPTY}x"),
			tree: "/etc/httpd.conf:1 Define \"EMPTY\"\n/etc/httpd.conf:2 ServerName \"${EMPTY}x\"\n",
			warn: "/etc/httpd.conf:2: AH00111: Config variable ${EMPTY} is not defined"},
		{name: "Define without value, from the environment", env: map[string]string{"EMPTY": "zz"}, files: conf("Define EMPTY", "ServerName ${EMPTY}x"),
			tree: "/etc/httpd.conf:1 Define \"EMPTY\"\n/etc/httpd.conf:2 ServerName \"zzx\"\n"},
		{name: "empty value is none", files: conf(`Define A ""`, "X ${A}"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"\"\n/etc/httpd.conf:2 X \"${A}\"\n", warn: "/etc/httpd.conf:2: AH00111: Config variable ${A} is not defined"},
		{name: "a later Define without value keeps it", files: conf("Define A 1", "Define A", "X ${A}"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"1\"\n/etc/httpd.conf:2 Define \"A\"\n/etc/httpd.conf:3 X \"1\"\n"},
		{name: "redefined in another case", files: conf("Define A 1", "Define a 2", "X ${A}"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"1\"\n/etc/httpd.conf:2 Define \"a\" \"2\"\n/etc/httpd.conf:3 X \"2\"\n"},
		// Checked: UnDefine drops the value by any case, the name by its own.
		{name: "UnDefine", files: conf("Define A 1", "UnDefine a", "X ${A}", "<IfDefine A>", "Yes", "</IfDefine>"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"1\"\n/etc/httpd.conf:2 UnDefine \"a\"\n/etc/httpd.conf:3 X \"${A}\"\n/etc/httpd.conf:5 Yes\n",
			warn: "/etc/httpd.conf:3: AH00111: Config variable ${A} is not defined"},
		{name: "the environment after Define", env: map[string]string{"A": "env", "B": "envb"}, files: conf("Define A def", "X ${A} ${B} ${a}"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"def\"\n/etc/httpd.conf:2 X \"def\" \"envb\" \"def\"\n"},
		// Checked: the odd references.
		{name: "odd references", env: map[string]string{"X": "1"}, files: conf("ErrorLog /x/${}${x:y}${X}$${X}${X.log"),
			tree: "/etc/httpd.conf:1 ErrorLog \"/x/${}${x:y}1$1${X.log\"\n",
			warn: "/etc/httpd.conf:1: AH00111: Config variable ${} is not defined"},
		{name: "no re-resolution", env: map[string]string{"A": "${B}", "B": "b"}, files: conf("X ${A}"), tree: "/etc/httpd.conf:1 X \"${B}\"\n"},
		{name: "in order", files: conf("X ${A}", "Define A 1", "Y ${A}", "UnDefine A", "Z ${A}"),
			tree: "/etc/httpd.conf:1 X \"${A}\"\n/etc/httpd.conf:2 Define \"A\" \"1\"\n/etc/httpd.conf:3 Y \"1\"\n/etc/httpd.conf:4 UnDefine \"A\"\n/etc/httpd.conf:5 Z \"${A}\"\n",
			warn: "/etc/httpd.conf:1: AH00111: Config variable ${A} is not defined\n/etc/httpd.conf:5: AH00111: Config variable ${A} is not defined"},
		{name: "in sections, through includes", files: map[string]string{
			"etc/httpd.conf": "Define ROOT /srv\n<VirtualHost *:80>\nDefine SUB www\nInclude vhost.conf\n</VirtualHost>\nX ${SUB}\n",
			"etc/vhost.conf": "<Directory ${ROOT}/${SUB}>\nRequire ip ${NET}\n</Directory>\n"},
			env: map[string]string{"NET": "10.0.0.0/8 192.168.0.0/16"},
			tree: "/etc/httpd.conf:1 Define \"ROOT\" \"/srv\"\n/etc/httpd.conf:2 <VirtualHost \"*:80\"\n  /etc/httpd.conf:3 Define \"SUB\" \"www\"\n" +
				"  /etc/vhost.conf:1 <Directory \"/srv/www\" <- /etc/httpd.conf:4\n    /etc/vhost.conf:2 Require \"ip\" \"10.0.0.0/8\" \"192.168.0.0/16\" <- /etc/httpd.conf:4\n/etc/httpd.conf:6 X \"www\"\n"},
		{name: "a section's name", files: conf("Define T Directory", "<${T} /x>", "Y", "</${T}>"),
			tree: "/etc/httpd.conf:1 Define \"T\" \"Directory\"\n/etc/httpd.conf:2 <Directory \"/x\"\n  /etc/httpd.conf:3 Y\n"},
		// Checked: a section httpd evaluates as it reads ends at the line
		// "</IfDefine>" as written, any other closing it is an error.
		{name: "makes an IfDefine", files: conf("Define I IfDefine", "Define Z 1", "<${I} Z>", "Yes", "</${I}>"),
			tree: "/etc/httpd.conf:1 Define \"I\" \"IfDefine\"\n/etc/httpd.conf:2 Define \"Z\" \"1\"\n/etc/httpd.conf:4 Yes\n",
			err:  "/etc/httpd.conf:5: </IfDefine> without matching <IfDefine> section"},
		// Where httpd closes a section made by a ${} reference with the
		// name the reference makes, the parser has already refused it:
		// sections are nested as written.
		{name: "a made name closed by its value", files: conf("Define I IfDefine", "<${I} !Z>", "Yes", "</IfDefine>"),
			tree: "/etc/httpd.conf:1 Define \"I\" \"IfDefine\"\n/etc/httpd.conf:3 Yes\n",
			err:  "/etc/httpd.conf:2: <${I}> was not closed.\n/etc/httpd.conf:4: Expected </${I}> but saw </IfDefine>"},
		{name: "words after the closing tag", files: conf("<IfDefine !X>", "Yes", "</IfDefine> # c", "<IfDefine X>", "</IfDefine> junk", "<ifdefine !X>", "Yes", "</IFDEFINE>"),
			tree: yes + "/etc/httpd.conf:7 Yes\n",
			err:  "/etc/httpd.conf:3: </IfDefine> without matching <IfDefine> section"},
		{name: "an empty line", files: conf("Define E \" \"", "${E}", "X"), tree: "/etc/httpd.conf:1 Define \"E\" \" \"\n/etc/httpd.conf:3 X\n"},
		// Checked: a value starting with '#' is no comment.
		{name: "no comment", files: conf(`Define A "#x"`, "${A} y"), tree: "/etc/httpd.conf:1 Define \"A\" \"#x\"\n/etc/httpd.conf:2 #x \"y\"\n"},
		{name: "not in a section that does not hold", files: conf("<IfDefine NO>", "X ${A}", "</IfDefine>")},
		{name: "a line made a section", files: conf(`Define O "<Directory /x>"`, "${O}", "Y"),
			tree: "/etc/httpd.conf:1 Define \"O\" \"<Directory /x>\"\n/etc/httpd.conf:3 Y\n",
			err:  "/etc/httpd.conf:2: unsupported: once its ${} references are resolved, this line reads \"<Directory /x>\", and Apache nests the sections around it otherwise than they are written"},
		{name: "2.2: the environment only", version: "2.2.34", env: map[string]string{"B": "b"}, files: conf("Define A 1", "X ${A} ${B} ${C}"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"1\"\n/etc/httpd.conf:2 X \"${A}\" \"b\" \"${C}\"\n"},
		{name: "2.2: Define does not define", version: "2.2.34", files: conf("Define A", "<IfDefine A>", "No", "</IfDefine>", "Define"),
			tree: "/etc/httpd.conf:1 Define \"A\"\n/etc/httpd.conf:5 Define\n"},
		{name: "position of a continued line", files: conf("Define A 1", "  X \\", "  ${A}"), tree: "/etc/httpd.conf:1 Define \"A\" \"1\"\n/etc/httpd.conf:2 X \"1\"\n"},
		// A reference that continuation lines make, where the text has
		// no "${" as written: a '$' ends a line (before the backslash,
		// or before a backslash that an empty line continues).
		{name: "a reference made by continuation lines", files: conf("Define A 1", "X $\\", "{A}", "Y $\\\\", "", "{A}"),
			tree: "/etc/httpd.conf:1 Define \"A\" \"1\"\n/etc/httpd.conf:2 X \"1\"\n/etc/httpd.conf:4 Y \"1\"\n"},
	})
}

// macro is "LoadModule macro_module ..." and lines.
func macroConf(lines ...string) map[string]string {
	return conf(append([]string{"LoadModule macro_module modules/mod_macro.so"}, lines...)...)
}

const lm = "/etc/httpd.conf:1 LoadModule \"macro_module\" \"modules/mod_macro.so\"\n"

func TestMacro(t *testing.T) {
	runPP(t, []ppCase{
		{name: "use", files: macroConf("<Macro VHost $name $dir>", "<VirtualHost *:80>", "  ServerName $name", "  <Directory $dir>", "    Require all granted", "  </Directory>", "</VirtualHost>", "</Macro>", "Use vhost a.example /srv/a", "USE VHOST b.example /srv/b"),
			tree: lm +
				"/etc/httpd.conf:3 <VirtualHost \"*:80\" <- /etc/httpd.conf:10\n  /etc/httpd.conf:4 ServerName \"a.example\" <- /etc/httpd.conf:10\n  /etc/httpd.conf:5 <Directory \"/srv/a\" <- /etc/httpd.conf:10\n    /etc/httpd.conf:6 Require \"all\" \"granted\" <- /etc/httpd.conf:10\n" +
				"/etc/httpd.conf:3 <VirtualHost \"*:80\" <- /etc/httpd.conf:11\n  /etc/httpd.conf:4 ServerName \"b.example\" <- /etc/httpd.conf:11\n  /etc/httpd.conf:5 <Directory \"/srv/b\" <- /etc/httpd.conf:11\n    /etc/httpd.conf:6 Require \"all\" \"granted\" <- /etc/httpd.conf:11\n"},
		// Checked: % and $ are replaced as they are, @ in quotes.
		{name: "prefixes", files: macroConf("<Macro M $a %b @c>", `X $a "%b" @c`, "</Macro>", `Use M "1 2" "3 4" 'a b\"c'`),
			tree: lm + "/etc/httpd.conf:3 X \"1\" \"2\" \"3 4\" \"a b\\\\\\\"c\" <- /etc/httpd.conf:5\n"},
		// Checked: mod_macro goes on after a quoted value as far as the
		// value is long, so that $b in its end is replaced too.
		{name: "quoted value rescanned", files: macroConf("<Macro X @a $b>", "ErrorLog /x/@a$b", "</Macro>", `Use X \\\\$b Z`),
			tree: lm + "/etc/httpd.conf:3 ErrorLog \"/x/\\\"\\\\\\\\Z\\\"Z\" <- /etc/httpd.conf:5\n"},
		{name: "longest name first", files: macroConf("<Macro M $a $ab>", "X $ab $a", "</Macro>", "Use M 1 2"),
			tree: lm + "/etc/httpd.conf:3 X \"2\" \"1\" <- /etc/httpd.conf:5\n",
			warn: "/etc/httpd.conf:2: AH02797: macro 'm' (defined on line 2 of \"/etc/httpd.conf\"): argument name prefix conflict ($a #1 and $ab #2), be careful about your macro definition!"},
		{name: "a value is not substituted again", files: macroConf("<Macro M $a $b>", "X $a", "</Macro>", "Use M $b 2"),
			tree: lm + "/etc/httpd.conf:3 X \"$b\" <- /etc/httpd.conf:5\n",
			warn: "/etc/httpd.conf:2: AH02800: macro 'm' (defined on line 2 of \"/etc/httpd.conf\"): argument '$b' (#2) never used"},
		// Checked: ${} in the body is resolved at the Use; Define in a
		// macro counts after it.
		{name: "variables", files: macroConf("Define V vv", "<Macro Doc $x>", "ErrorLog /x/${V}$x.log", "Define W $x", "</Macro>", "Define V ww", `Use doc ""`, "X ${W}"),
			tree: lm + "/etc/httpd.conf:2 Define \"V\" \"vv\"\n/etc/httpd.conf:7 Define \"V\" \"ww\"\n/etc/httpd.conf:4 ErrorLog \"/x/ww.log\" <- /etc/httpd.conf:8\n/etc/httpd.conf:5 Define \"W\" <- /etc/httpd.conf:8\n/etc/httpd.conf:9 X \"${W}\"\n",
			warn: "/etc/httpd.conf:8: AH02798: macro 'doc' (defined on line 3 of \"/etc/httpd.conf\") used on line 8 of \"/etc/httpd.conf\": empty argument #1\n/etc/httpd.conf:9: AH00111: Config variable ${W} is not defined"},
		// Checked: the Use line is resolved before its arguments are split.
		{name: "arguments from ${}", env: map[string]string{"D": "q r.log"}, files: macroConf("<Macro X $a>", "ErrorLog /x/$a", "</Macro>", "Use X ${D}"),
			err: "/etc/httpd.conf:5: macro 'x' (defined on line 2 of \"/etc/httpd.conf\") used with 2 arguments instead of 1", tree: lm},
		// Checked: a macro defined by a macro.
		{name: "nested definition", files: macroConf("<Macro Outer $n>", "<Macro Inner>", "ErrorLog /x/$n.log", "</Macro>", "</Macro>", "Use Outer yy", "Use inner"),
			tree: lm + "/etc/httpd.conf:4 ErrorLog \"/x/yy.log\" <- /etc/httpd.conf:8\n"},
		{name: "a macro using another", files: macroConf("<Macro A $x>", "Use B $x-a", "</Macro>", "<Macro B $y>", "Y $y", "</Macro>", "Use A 1"),
			tree: lm + "/etc/httpd.conf:6 Y \"1-a\" <- /etc/httpd.conf:8 <- /etc/httpd.conf:3\n"},
		{name: "an Include in a macro", files: map[string]string{
			"etc/httpd.conf": "LoadModule macro_module modules/mod_macro.so\n<Macro I $f>\nInclude $f\n</Macro>\nUse I inc.conf\n",
			"etc/inc.conf":   "Inc\n"},
			tree: lm + "/etc/inc.conf:1 Inc <- /etc/httpd.conf:5 <- /etc/httpd.conf:3\n"},
		{name: "defined in one file, used in another", files: map[string]string{
			"etc/httpd.conf": "LoadModule macro_module modules/mod_macro.so\nInclude m.conf\n<Directory /x>\n  Use M\n</Directory>\n",
			"etc/m.conf":     "\n<Macro M>\n  Deny from all\n</Macro>\n"},
			tree: lm + "/etc/httpd.conf:3 <Directory \"/x\"\n  /etc/m.conf:3 Deny \"from\" \"all\" <- /etc/httpd.conf:4\n"},
		{name: "UndefMacro", files: macroConf("<Macro A>", "X", "</Macro>", "UndefMacro a", "Use A"),
			err: "/etc/httpd.conf:6: macro 'a' undefined", tree: lm},

		// Checked: httpd's messages.
		{name: "recursion", files: macroConf("<Macro A>", "Use B", "</Macro>", "<Macro B>", "Use A", "</Macro>", "Use A"),
			err: "/etc/httpd.conf:6: recursive use of macro 'a' is invalid (included from /etc/httpd.conf:3, /etc/httpd.conf:8)", tree: lm},
		{name: "no macro defined", files: macroConf("Use A"), err: "/etc/httpd.conf:2: no macro defined before Use", tree: lm},
		{name: "no name", files: macroConf("<Macro A>", "X", "</Macro>", "Use"), err: "/etc/httpd.conf:5: no macro name specified with Use", tree: lm},
		{name: "UndefMacro before any", files: macroConf("UndefMacro A"), err: "/etc/httpd.conf:2: no macro defined before UndefMacro", tree: lm},
		{name: "UndefMacro undefined", files: macroConf("<Macro A>", "X", "</Macro>", "UndefMacro B"), err: "/etc/httpd.conf:5: cannot remove undefined macro 'b'", tree: lm},
		{name: "UndefMacro arguments", files: macroConf("<Macro A>", "X", "</Macro>", "UndefMacro A B"), err: "/etc/httpd.conf:5: UndefMacro takes one argument, Remove a macro definition.", tree: lm},
		{name: "arguments", files: macroConf("<Macro Doc $d>", "DocumentRoot $d", "</Macro>", "Use doc /tmp x"),
			err: "/etc/httpd.conf:5: macro 'doc' (defined on line 2 of \"/etc/httpd.conf\") used with 2 arguments instead of 1", tree: lm},
		{name: "no arguments", files: macroConf("<Macro A>", "X", "</Macro>", `Use a ""`),
			err: "/etc/httpd.conf:5: macro 'a' (defined on line 2 of \"/etc/httpd.conf\") used with 1 arguments instead of 0", tree: lm},
		{name: "same argument twice", files: macroConf("<Macro Doc $d $d>", "X $d", "</Macro>"),
			err: "/etc/httpd.conf:2: argument name conflict in macro 'doc' (defined on line 2 of \"/etc/httpd.conf\"): argument '$d': #1 and #2, change argument names!", tree: lm},
		{name: "empty argument name", files: macroConf(`<Macro Doc $d "">`, "X $d", "</Macro>"),
			err: "/etc/httpd.conf:2: macro 'doc' (defined on line 2 of \"/etc/httpd.conf\"): empty argument #2 name", tree: lm},
		{name: "empty name", files: macroConf("<Macro>", "X", "</Macro>"), err: "/etc/httpd.conf:2: <Macro macro definition: empty name", tree: lm},
		{name: "name not found", files: macroConf(`<Macro "">`, "X", "</Macro>"), err: "/etc/httpd.conf:2: <Macro macro definition: name not found", tree: lm},
		{name: "warnings", files: macroConf("<Macro Doc $a $ab x> junk", "X $ab", "</Macro>", "<Macro doc>", "</Macro>", "<Macro $m>", "# comment", "</Macro>", "<Macro C> # comment", "Y", "</Macro>"),
			tree: lm,
			warn: "/etc/httpd.conf:2: AH02989: AH02801: non blank chars found after <Macro closing '>' on line 2 of /etc/httpd.conf:  junk\n" +
				"/etc/httpd.conf:2: AH02797: macro 'doc' (defined on line 2 of \"/etc/httpd.conf\"): argument name prefix conflict ($a #1 and $ab #2), be careful about your macro definition!\n" +
				"/etc/httpd.conf:2: AH02796: macro 'doc' (defined on line 2 of \"/etc/httpd.conf\") argument name 'x' (#3) without expected prefix, better prefix argument names with one of '$%@'.\n" +
				"/etc/httpd.conf:2: AH02800: macro 'doc' (defined on line 2 of \"/etc/httpd.conf\"): argument '$a' (#1) never used\n" +
				"/etc/httpd.conf:2: AH02800: macro 'doc' (defined on line 2 of \"/etc/httpd.conf\"): argument 'x' (#3) never used\n" +
				"/etc/httpd.conf:5: AH02802: macro 'doc' multiply defined: defined on line 2 of \"/etc/httpd.conf\", redefined on line 5 of \"/etc/httpd.conf\"\n" +
				"/etc/httpd.conf:5: AH02799: macro 'doc' (defined on line 5 of \"/etc/httpd.conf\"): empty contents!\n" +
				"/etc/httpd.conf:7: AH02803: macro '$m' (defined on line 7 of \"/etc/httpd.conf\") better prefix a macro name with any of '$%@'\n" +
				"/etc/httpd.conf:7: AH02799: macro '$m' (defined on line 7 of \"/etc/httpd.conf\"): empty contents!"},
		{name: "error inside the expansion", files: macroConf("<Macro M $d>", "<Directory $d>", "</Directory>", "<IfVersion $d>", "</IfVersion>", "</Macro>", "Use M /x"),
			tree: lm + "/etc/httpd.conf:3 <Directory \"/x\" <- /etc/httpd.conf:8\n",
			err:  "/etc/httpd.conf:5: Missing delimiting / of regular expression. (included from /etc/httpd.conf:8)"},
		{name: "a line too long", files: macroConf("<Macro M $a>", "X $a", "</Macro>", "Use M "+strings.Repeat("a", 8190)),
			err: "/etc/httpd.conf:5: macro 'm' (defined on line 2 of \"/etc/httpd.conf\") used on line 5 of \"/etc/httpd.conf\" error while substituting: while processing line 1 of macro 'm' (defined on line 2 of \"/etc/httpd.conf\") cannot substitute, buffer size too small", tree: lm},

		// Without mod_macro, and in 2.2, it is all unknown.
		{name: "without mod_macro", files: conf("<Macro M>", "Include x.conf", "</Macro>", "Use M"),
			tree: "/etc/httpd.conf:1 <Macro \"M\"\n/etc/httpd.conf:4 Use \"M\"\n",
			err:  "/etc/httpd.conf:2: Could not open configuration file /etc/x.conf: No such file or directory"},
		{name: "2.2", version: "2.2.34", files: macroConf("<Macro M>", "X", "</Macro>", "Use M"),
			tree: lm + "/etc/httpd.conf:2 <Macro \"M\"\n  /etc/httpd.conf:3 X\n/etc/httpd.conf:5 Use \"M\"\n"},
		{name: "before LoadModule", files: conf("<Macro M>", "X", "</Macro>", "LoadModule macro_module modules/mod_macro.so", "Use M"),
			tree: "/etc/httpd.conf:1 <Macro \"M\"\n  /etc/httpd.conf:2 X\n/etc/httpd.conf:4 LoadModule \"macro_module\" \"modules/mod_macro.so\"\n",
			err:  "/etc/httpd.conf:5: no macro defined before Use"},
		{name: "Use as a section", files: macroConf("<Use M>", "</Use>"),
			err: "/etc/httpd.conf:2: Invalid command '<Use', perhaps misspelled or defined by a module not included in the server configuration", tree: lm},
	})
}

func TestVersionOption(t *testing.T) {
	for _, v := range []string{"2.0.65", "3", "2.4.71.1", "x", "2.6.0", "2.4.x"} {
		_, err := Load("/etc/httpd.conf", Options{Version: v, ReadFile: func(string) ([]byte, error) { return nil, nil }})
		if err == nil {
			t.Errorf("Version %q: no error", v)
		}
	}
	for v, want := range map[string]version{"": {2, 4, 71, ""}, "2.2": {2, 2, 0, ""}, "2.4.71-dev": {2, 4, 71, "-dev"}, "2.2.34": {2, 2, 34, ""}} {
		if got, err := parseVersion(v); err != nil || got != want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
}

// TestConditionals reads .htaccess files with the state a configuration
// left: httpd reads them with the code that reads its configuration.
func TestConditionals(t *testing.T) {
	files := mapFS(map[string]string{
		"etc/httpd.conf": "LoadModule macro_module modules/mod_macro.so\nServerRoot /srv\nDefine NET 10.0.0.0/8\nDefine GONE 1\nUnDefine GONE\n" +
			"<Macro Deny $who>\nOrder deny,allow\nDeny from $who\n</Macro>\n",
		"srv/flag": "",
	})
	opt := fsOptions(files)
	_, st, err := LoadState("/etc/httpd.conf", opt)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := st.Var("net"); !ok || v != "10.0.0.0/8" || st.Defined("GONE") || !st.Defined("NET") || st.ServerRoot() != "/srv" || !st.Loaded("mod_macro.c") {
		t.Fatalf("state: %+v", st)
	}
	const ht = "Allow from ${NET} ${GONE}\n<IfVersion >= 2.4>\nUse deny all\n</IfVersion>\n<IfFile flag>\n<Files x>\nUse deny ${NET}\n</Files>\n</IfFile>\n" +
		"<IfDefine NET>\nInclude x\n</IfDefine>\n<Macro Local>\nAllow from 127.0.0.1\n</Macro>\nUse local\n"
	tests := []struct {
		name    string
		opt     Options
		tree    string
		err     string
		warning string
	}{
		{name: "with the state", opt: Options{State: st, Stat: opt.Stat},
			tree: "/www/.htaccess:1 Allow \"from\" \"10.0.0.0/8\" \"${GONE}\"\n/etc/httpd.conf:7 Order \"deny,allow\" <- /www/.htaccess:3\n/etc/httpd.conf:8 Deny \"from\" \"all\" <- /www/.htaccess:3\n" +
				"/www/.htaccess:6 <Files \"x\"\n  /etc/httpd.conf:7 Order \"deny,allow\" <- /www/.htaccess:7\n  /etc/httpd.conf:8 Deny \"from\" \"10.0.0.0/8\" <- /www/.htaccess:7\n" +
				"/www/.htaccess:11 Include \"x\"\n/www/.htaccess:14 Allow \"from\" \"127.0.0.1\" <- /www/.htaccess:16\n",
			warning: "/www/.htaccess:1: AH00111: Config variable ${GONE} is not defined"},
		{name: "2.4.29: the configuration's macros are not there", opt: Options{State: st, Stat: opt.Stat, Version: "2.4.29"},
			tree:    "/www/.htaccess:1 Allow \"from\" \"10.0.0.0/8\" \"${GONE}\"\n/www/.htaccess:5 <IfFile \"flag\"\n  /www/.htaccess:6 <Files \"x\"\n/www/.htaccess:11 Include \"x\"\n/www/.htaccess:14 Allow \"from\" \"127.0.0.1\" <- /www/.htaccess:16\n",
			err:     "/www/.htaccess:3: no macro defined before Use\n/www/.htaccess:7: no macro defined before Use",
			warning: "/www/.htaccess:1: AH00111: Config variable ${GONE} is not defined"},
		{name: "without a state", opt: Options{Stat: opt.Stat, Getenv: func(string) (string, bool) { return "", false }},
			tree:    "/www/.htaccess:1 Allow \"from\" \"${NET}\" \"${GONE}\"\n/www/.htaccess:3 Use \"deny\" \"all\"\n/www/.htaccess:13 <Macro \"Local\"\n  /www/.htaccess:14 Allow \"from\" \"127.0.0.1\"\n/www/.htaccess:16 Use \"local\"\n",
			warning: "/www/.htaccess:1: AH00111: Config variable ${NET} is not defined\n/www/.htaccess:1: AH00111: Config variable ${GONE} is not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := Parse("/www/.htaccess", []byte(ht))
			if err != nil {
				t.Fatal(err)
			}
			before := dumpTree(ds)
			var warns []string
			tt.opt.Warn = func(e *Error) { warns = append(warns, e.Error()) }
			if tt.opt.Getenv == nil {
				tt.opt.Getenv = func(string) (string, bool) { return "", false }
			}
			out, err := Conditionals(ds, tt.opt)
			if got := errString(err); got != tt.err {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.err)
			}
			if got := dump(out); got != tt.tree {
				t.Errorf("tree:\n%s\nwant:\n%s", got, tt.tree)
			}
			if got := strings.Join(warns, "\n"); got != tt.warning {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.warning)
			}
			if dumpTree(ds) != before {
				t.Errorf("Conditionals changed its input:\n%s\nwas:\n%s", dumpTree(ds), before)
			}
		})
	}
}

func TestPreprocessEdges(t *testing.T) {
	runPP(t, []ppCase{
		// One error for a line without '>', the parser's.
		{name: "IfVersion without >", files: conf("<IfVersion >= 2.4", "</IfVersion>"), err: "/etc/httpd.conf:1: <IfVersion> directive missing closing '>'"},
		{name: "IfModule without >", files: conf("<IfModule mod_so.c", "</IfModule>"), err: "/etc/httpd.conf:1: <IfModule> directive missing closing '>'"},
		{name: "IncludeOptional in 2.2", version: "2.2.34", files: conf("IncludeOptional nothing.conf"), tree: "/etc/httpd.conf:1 IncludeOptional \"nothing.conf\"\n"},
		{name: "IncludeOptional in 2.4", files: conf("IncludeOptional nothing.conf")},
		// 2.2's IfDefine takes one word: quotes are removed, a second
		// word is an error.
		{name: "IfDefine quoted in 2.2", version: "2.2.34", files: conf(`<IfDefine "!X>">`, "</IfDefine>"),
			err: "/etc/httpd.conf:1: <IfDefine takes one argument, Container for directives based on existance of command line defines"},
		{name: "IfDefine one quoted word in 2.2", version: "2.2.34", files: conf(`<IfDefine "!X>"`, "Yes", "</IfDefine>"), tree: yes},
	})
}
