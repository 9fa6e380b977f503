// Package convert writes a legacy Apache 2.2 configuration out as Apache
// 2.4 text (catalogue DIR-10, AUTH-*, DIR-01..09): Convert loads the files
// into translate's access model and writes, for each section with access
// rules, the Require tree that decides as the legacy rules did, with what
// the section inherits folded in; everything else is kept as written.
//
// It owns the writer: the section and .htaccess translations, the
// renames, the module lines, the text edits. What a section has in force
// (translate.Inherited, translate.Layers) is the model's.
//
// convert imports translate and below (apacheconf, policy); it never
// imports translate/lint, translate/walk or proxy, and translate never
// imports it.
package convert
