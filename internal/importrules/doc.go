// Package importrules holds, in its test, the import rules of orderly's
// packages (issue 18): the stages read from the bottom up, syntax
// (translate/apacheconf) below the model (translate) below what reads it
// (translate/lint, translate/walk, proxy), and cmd on top, wiring only.
// It has no code.
package importrules
