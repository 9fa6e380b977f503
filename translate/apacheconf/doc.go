// Package apacheconf reads Apache httpd configuration files.
//
// It owns the syntax of a configuration and nothing else: it splits a file
// into directives the way httpd 2.4 does, nests sections, and follows what
// httpd executes while it reads, as the version it is read as has it
// (Options.Version, 2.2 or 2.4): Include and IncludeOptional; the
// conditional sections <IfModule>, <IfDefine>, <IfVersion>, <IfFile>,
// <IfDirective> and <IfSection>; Define and UnDefine; ${VAR} references;
// mod_macro's <Macro>, Use and UndefMacro. What a directive means, access
// control included, is for the callers to decide, and so is refusing what
// the version does not know: what does not exist for it (<IfFile> in 2.2,
// <Macro> without mod_macro, ...) is left in the tree as written.
//
// [Parse] reads one file. [Load] reads a file and everything it includes and
// returns the flattened tree that httpd would go on to process; [LoadState]
// returns also what the configuration leaves in force (variables, modules,
// macros), with which [Conditionals] evaluates an .htaccess file as httpd
// reads one while serving. [Walk] visits a tree and [Render] prints one
// back as configuration text.
//
// The sources followed are httpd's: server/config.c, server/core.c,
// server/util.c, modules/metadata/mod_version.c and modules/core/mod_macro.c,
// of the 2.2.x and 2.4.x branches; the tests that hold the code to them are
// in load_test.go and preprocess_test.go, the cases marked "checked" there
// run on Debian's apache2 2.4.71 too.
//
// # Syntax
//
// The rules are httpd's (server/util.c ap_cfg_getline and ap_getword_conf,
// server/config.c ap_build_config):
//
//   - Lines end in "\n" or "\r\n". Leading and trailing white space is
//     dropped. A UTF-8 byte order mark at the start of a file is skipped
//     (httpd does so only on Windows; elsewhere it makes the first directive
//     unknown, so no working configuration depends on the difference).
//   - A backslash just before the end of a line joins the next line to it:
//     the backslash and the line end are removed and nothing is added, so
//     the next line's leading white space is kept. This happens before
//     comments are recognised, so a comment ending in a backslash swallows
//     the next line, as in httpd.
//   - A line whose first character is '#' is a comment. A '#' anywhere else
//     is an ordinary character.
//   - Words are separated by white space. A word that starts with a double
//     or a single quote runs to the matching quote, and a backslash before
//     that quote character stands for the quote. A quoted word ends at its
//     closing quote, even if no white space follows. In any word `\\`
//     stands for one backslash; every other backslash is literal. A quote
//     that is never closed runs to the end of the line.
//   - A line whose first word starts with '<' opens a section, and one whose
//     first word starts with "</" closes one. The arguments of a section are
//     the text up to the last '>' on the line (anything after it is ignored,
//     as httpd does).
//
// Directive and section names are case-insensitive; they are kept as written.
// Any name is accepted: whether httpd knows a directive, and where it may
// appear, is for the caller to check.
// An argument that is an empty quoted string ("") is kept as an empty
// argument.
//
// Parse does not expand ${VAR} references; they are left in the arguments,
// for Load and Conditionals to resolve, in the order of reading, as httpd
// does (see [Load]).
//
// The package imports only the standard library and orderly's internal
// helpers; it knows nothing of access control.
package apacheconf
