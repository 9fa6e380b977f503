// Package policy decides one request against the access configuration
// that Apache's per-directory merge left in force for it, as Apache httpd
// decides it: the host-access layer of mod_access_compat (Order, Allow,
// Deny, per method with <Limit>), Satisfy, the Require tree of
// mod_authz_core (2.4) or the Require lines of 2.2's core, and Basic
// authentication against the password and group files.
//
// A [Layers] is what the merge produced (package translate/walk finds the
// sections and merges them); [Decide] answers a [Request] with a
// [Decision]: allowed or the status refused with, the layer and the
// [Rule] that decided, and, when asked, the rules the answer depended on
// (necessity.go). Every node that came from a directive points at its
// Rule, which counts, without locks, how often it matched and decided:
// the evidence orderly retire reads.
//
// The package is the bottom of orderly's stages and imports nothing of
// orderly's (internal/importrules holds that). Its decision costs no
// allocation and does not grow with the number of rules: address lists
// are compiled into prefix sets ([Compat.Compile]).
package policy
