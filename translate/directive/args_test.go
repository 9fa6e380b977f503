package directive_test

import (
	"testing"

	"github.com/orderly-proxy/orderly/translate/directive"
)

// TestCheckArgs holds CheckArgs to invoke_cmd (server/config.c): the words
// are ap_getword_conf's, so "" is an empty quoted word, which a TAKE*
// counts as missing.
func TestCheckArgs(t *testing.T) {
	row := func(a directive.Args) *directive.Info {
		return &directive.Info{Name: "X", Args: a, Help: "help"}
	}
	tests := []struct {
		args directive.Args
		v    directive.Version
		in   []string
		want string // "" for none
	}{
		{directive.RawArgs, directive.V24, nil, ""},
		{directive.TakeArgv, directive.V24, []string{"a", "b", "c", "d"}, ""},
		{directive.NoArgs, directive.V24, nil, ""},
		{directive.NoArgs, directive.V24, []string{""}, "X takes no arguments"},

		{directive.Take1, directive.V24, []string{"a"}, ""},
		{directive.Take1, directive.V24, nil, "X takes one argument, help"},
		{directive.Take1, directive.V24, []string{""}, "X takes one argument, help"},
		{directive.Take1, directive.V24, []string{"a", "b"}, "X takes one argument, help"},

		{directive.Take2, directive.V24, []string{"a", "b"}, ""},
		{directive.Take2, directive.V24, []string{"a"}, "X takes two arguments, help"},
		{directive.Take2, directive.V24, []string{"a", ""}, "X takes two arguments, help"},
		{directive.Take2, directive.V24, []string{"a", "b", "c"}, "X takes two arguments, help"},

		{directive.Take3, directive.V24, []string{"a", "b", "c"}, ""},
		{directive.Take3, directive.V24, []string{"a", "b"}, "X takes three arguments, help"},
		{directive.Take3, directive.V24, []string{"a", "b", "c", "d"}, "X takes three arguments, help"},

		{directive.Take12, directive.V24, []string{"a"}, ""},
		{directive.Take12, directive.V24, []string{"a", ""}, ""}, // w2 "" is no second argument
		{directive.Take12, directive.V24, []string{"", "b"}, "X takes 1-2 arguments, help"},
		{directive.Take12, directive.V24, []string{"a", "b", "c"}, "X takes 1-2 arguments, help"},

		{directive.Take13, directive.V24, []string{"a"}, ""},
		{directive.Take13, directive.V24, []string{"a", "b", "c"}, ""},
		{directive.Take13, directive.V24, []string{"a", ""}, ""}, // w2 && *w2 && !w3: an empty w2 passes
		{directive.Take13, directive.V24, []string{"a", "b"}, "X takes one or three arguments, help"},
		{directive.Take13, directive.V24, []string{"a", "b", "c", "d"}, "X takes one or three arguments, help"},

		{directive.Take23, directive.V24, []string{"a", "b"}, ""},
		{directive.Take23, directive.V24, []string{"a", "b", ""}, ""},
		{directive.Take23, directive.V24, []string{"a"}, "X takes two or three arguments, help"},
		{directive.Take23, directive.V24, []string{"a", "b", "c", "d"}, "X takes two or three arguments, help"},

		{directive.Take123, directive.V24, []string{"a"}, ""},
		{directive.Take123, directive.V24, []string{"a", "b", "c"}, ""},
		{directive.Take123, directive.V24, nil, "X takes one, two or three arguments, help"},
		{directive.Take123, directive.V24, []string{"a", "b", "c", "d"}, "X takes one, two or three arguments, help"},

		{directive.Iterate, directive.V24, []string{"a", "b", "c"}, ""},
		{directive.Iterate, directive.V24, []string{"a", "", "c"}, ""}, // stops at the empty word
		{directive.Iterate, directive.V24, nil, "X requires at least one argument, help"},
		{directive.Iterate, directive.V24, []string{"", "b"}, "X requires at least one argument, help"},
		{directive.Iterate, directive.V22, nil, ""}, // 2.2 runs it for no word at all

		{directive.Iterate2, directive.V24, []string{"a", "b"}, ""},
		{directive.Iterate2, directive.V24, []string{"a", ""}, ""},
		{directive.Iterate2, directive.V24, []string{"a"}, "X requires at least two arguments, help"},
		{directive.Iterate2, directive.V22, []string{"", "b"}, "X requires at least two arguments, help"},

		{directive.Flag, directive.V24, []string{"On"}, ""},
		{directive.Flag, directive.V24, []string{"oFF"}, ""},
		{directive.Flag, directive.V24, []string{"off", "more"}, ""}, // the rest is not read
		{directive.Flag, directive.V22, []string{"ON"}, ""},
		{directive.Flag, directive.V24, nil, "X must be On or Off"},
		{directive.Flag, directive.V24, []string{"yes"}, "X must be On or Off"},
		{directive.Flag, directive.V24, []string{"on "}, "X must be On or Off"},
	}
	for _, tt := range tests {
		if got := directive.CheckArgs(row(tt.args), tt.v, tt.in); got != tt.want {
			t.Errorf("%s %s %q: %q, want %q", tt.args, tt.v, tt.in, got, tt.want)
		}
	}
}

// TestCheckArgsRows checks the table's rows where the message depends on
// the version or on a missing help string.
func TestCheckArgsRows(t *testing.T) {
	tests := []struct {
		name string
		v    directive.Version
		in   []string
		want string
	}{
		{"AuthName", directive.V24, nil, `AuthName takes one argument, the authentication realm (e.g. "Members Only")`},
		{"AuthUserFile", directive.V24, []string{"a", "b"}, "AuthUserFile takes one argument, text file containing user IDs and passwords"},
		{"AuthUserFile", directive.V22, []string{"a", "b"}, ""}, // TAKE12 in 2.2
		{"KeepAlive", directive.V24, []string{"5"}, "KeepAlive must be On or Off"},
		{"KeepAlive", directive.V22, []string{"5"}, ""}, // TAKE1 in 2.2
		{"allow", directive.V24, []string{"from"}, "allow requires at least two arguments, 'from' followed by hostnames or IP-address wildcards"},
		{"SSLRequireSSL", directive.V24, []string{"a"}, ""}, // AP_INIT_NO_ARGS is RAW_ARGS
		{"DirectoryIndex", directive.V22, nil, ""},          // ITERATE: none is fine in 2.2
	}
	for _, tt := range tests {
		rows := directive.Lookup(tt.name, tt.v)
		if len(rows) == 0 {
			t.Errorf("%s: no %s row", tt.name, tt.v)
			continue
		}
		if got := directive.CheckArgs(rows[0], tt.v, tt.in); got != tt.want {
			t.Errorf("%s %s %q: %q, want %q", tt.name, tt.v, tt.in, got, tt.want)
		}
	}
}
