// Package lint checks an Apache httpd 2.2 configuration for what changes,
// breaks or needs rewriting on 2.4, and writes the findings as text, JSON
// or SARIF 2.1.0.
//
// It owns the upgrade rules: every rule of the catalogue
// (shared/docs/rule-catalogue.md, taken from the upgrade document
// shared/docs/upgrade-2.2-to-2.4.md) that a configuration can show, plus
// orderly's own checks (ORD-*), each with a stable ID, a severity and its
// texts in one table ([Rules]). [Lint] reads httpd.conf with everything it
// includes (translate/apacheconf) and the .htaccess files under every
// document root and <Directory> that exists on disk, and reports one
// [Finding] per occurrence with its file:line:column.
//
// What the tool cannot know from the files (what a third-party module was
// built for, the back ends' certificates, the contents of SSI pages, URLs
// that carry session identifiers) it says in the finding.
//
// It imports translate/apacheconf and the standard library only; it does
// not import the access model (translate) or policy: its access analysis is
// a static reading of sections, after apache-access-semantics.md.
package lint
