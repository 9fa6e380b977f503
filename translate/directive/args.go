package directive

import "strings"

// Args is how Apache's configuration reader takes a directive's
// arguments before it runs the directive (server/config.c invoke_cmd):
// the command table's args_how.
type Args uint8

// The kinds, in Apache's names (include/http_config.h, enum
// cmd_how). AP_INIT_NO_ARGS declares RAW_ARGS, not NO_ARGS, in both
// 2.2 and 2.4 (http_config.h), so no directive Apache ships is NoArgs;
// SSLRequireSSL takes any arguments.
const (
	RawArgs  Args = iota // RAW_ARGS: the directive reads its argument text itself
	Take1                // TAKE1: one argument
	Take2                // TAKE2: two arguments
	Take3                // TAKE3: three arguments
	Take12               // TAKE12: one or two
	Take13               // TAKE13: one or three
	Take23               // TAKE23: two or three
	Take123              // TAKE123: one, two or three
	Iterate              // ITERATE: one or more, each taken alone
	Iterate2             // ITERATE2: a first argument, then one or more taken with it
	Flag                 // FLAG: On or Off
	NoArgs               // NO_ARGS: none
	TakeArgv             // TAKE_ARGV: any number, counted by the directive
)

var argsNames = [...]string{"RAW_ARGS", "TAKE1", "TAKE2", "TAKE3", "TAKE12", "TAKE13", "TAKE23", "TAKE123", "ITERATE", "ITERATE2", "FLAG", "NO_ARGS", "TAKE_ARGV"}

func (a Args) String() string {
	if int(a) < len(argsNames) {
		return argsNames[a]
	}
	return "unknown"
}

// CheckArgs reports Apache's error for the arguments args of a directive
// of the row i in version v, as invoke_cmd (server/config.c) checks them
// before it runs the directive, or "" when they pass. args are the words
// of the directive's argument text as ap_getword_conf splits them:
// unquoted and unescaped, an empty quoted word ("") kept as "". Only the
// count (and a FLAG's On or Off) is checked: what a directive then says
// of its values, and what a RAW_ARGS or TAKE_ARGV directive says of its
// arguments, is not.
func CheckArgs(i *Info, v Version, args []string) string {
	// word returns what the n-th ap_getword_conf call returns: "" past
	// the end, as Apache's does on an empty line.
	word := func(n int) string {
		if n < len(args) {
			return args[n]
		}
		return ""
	}
	// more reports whether text is left after n words (invoke_cmd's
	// *args != 0): ap_getword_conf skips the white space after a word.
	more := func(n int) bool { return len(args) > n }
	what := ""
	switch i.Args {
	case NoArgs:
		if more(0) {
			return i.Name + " takes no arguments"
		}
	case Take1:
		if word(0) == "" || more(1) {
			what = " takes one argument"
		}
	case Take2:
		if word(0) == "" || word(1) == "" || more(2) {
			what = " takes two arguments"
		}
	case Take12:
		if word(0) == "" || more(2) {
			what = " takes 1-2 arguments"
		}
	case Take3:
		if word(0) == "" || word(1) == "" || word(2) == "" || more(3) {
			what = " takes three arguments"
		}
	case Take23:
		if word(0) == "" || word(1) == "" || more(3) {
			what = " takes two or three arguments"
		}
	case Take123:
		if word(0) == "" || more(3) {
			what = " takes one, two or three arguments"
		}
	case Take13:
		// The second word, when there is one and it is not empty,
		// needs a third (w2 && *w2 && !w3).
		if word(0) == "" || word(1) != "" && !more(2) || more(3) {
			what = " takes one or three arguments"
		}
	case Iterate:
		// 2.2 runs the directive for each word, none if there is none
		// (2.2.34 server/config.c:860); 2.4 wants one.
		if word(0) == "" && v&V24 != 0 {
			what = " requires at least one argument"
		}
	case Iterate2:
		if word(0) == "" || !more(1) {
			what = " requires at least two arguments"
		}
	case Flag:
		// Only the first word: what follows it is not looked at.
		if w := word(0); !strings.EqualFold(w, "on") && !strings.EqualFold(w, "off") {
			return i.Name + " must be On or Off"
		}
	}
	if what == "" {
		return ""
	}
	if i.Help == "" {
		return i.Name + what
	}
	return i.Name + what + ", " + i.Help
}
