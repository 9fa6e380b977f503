package walk

import (
	"io/fs"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// What core's Options do to a request (server/request.c, 2.2.34 and
// 2.4.x; modules/generators/mod_autoindex.c):
//
//   - FollowSymLinks and SymLinksIfOwnerMatch are tested by the directory
//     walk, component by component, with the options merged so far: those
//     of the directory that holds the component (its <Directory> sections
//     and .htaccess file, and everything above), never the component's own
//     sections, which merge after it was tested. A symbolic link they do
//     not allow is 403 (AH00037). <DirectoryMatch>, <Files> and <Location>
//     merge after the walk: their Options never change what it allowed.
//     The walk skips the test, and the lstat, for a path that exists as a
//     whole while FollowSymLinks without SymLinksIfOwnerMatch is in force.
//     A DirectoryIndex subrequest reuses the walk of its directory and
//     tests only the index file itself, with the directory's options, and
//     only when they lack FollowSymLinks (AH00032).
//   - Indexes: mod_autoindex answers a GET for a directory with no
//     DirectoryIndex file, and 403 (AH01276) where the options of the
//     request, every section merged, lack Indexes. Without mod_autoindex
//     the directory goes to the default handler (404, AH00129), which the
//     backend gives as well.
//
// TestSymlinkOptions, TestIndexSymlink and TestIndexesOption, and the
// corpus cases 150 to 154 (run on Apache 2.4), are the proof.

// optionsOf are the options a section merges: every section but an
// .htaccess file has a core configuration, unset where it has no Options.
func optionsOf(s *translate.Section) (translate.CoreOptions, bool) {
	switch {
	case s.Conf.Options != nil:
		return *s.Conf.Options, true
	case s.Kind != translate.KindHtaccess:
		return translate.CoreOptions{Opts: translate.OptUnset}, true
	}
	return translate.CoreOptions{}, false
}

// mergeOptions merges the options of s over o.
func mergeOptions(o translate.CoreOptions, s *translate.Section) translate.CoreOptions {
	if so, ok := optionsOf(s); ok {
		return o.Merge(so)
	}
	return o
}

// serverOptions are the options of the server's defaults
// (lookup_defaults), where the walk starts.
func (e *Engine) serverOptions() translate.CoreOptions {
	if d := e.cfg.Defaults; d != nil && d.Options != nil {
		return *d.Options
	}
	return translate.DefaultOptions(e.cfg.Semantics)
}

// symlinkOK is resolve_symlink: whether the options allow the symbolic
// link at name, whose lstat is lfi, and what it points to. Neither
// FollowSymLinks nor SymLinksIfOwnerMatch refuses any link; a link whose
// target cannot be read is refused; with SymLinksIfOwnerMatch the link's
// owner must own the target.
func (e *Engine) symlinkOK(name string, lfi fs.FileInfo, opts translate.OptionBits) (fs.FileInfo, bool) {
	if opts&(translate.OptSymOwner|translate.OptSymLinks) == 0 {
		return nil, false
	}
	fi, err := e.fs.Stat(name)
	if err != nil {
		return nil, false
	}
	if opts&translate.OptSymOwner != 0 {
		lu, lok := owner(lfi)
		tu, tok := owner(fi)
		if !lok || !tok || lu != tu {
			return nil, false
		}
	}
	return fi, true
}

// optionsRule names the rule behind a refusal by the options in force
// (bits: the options whose absence refused): the Options line of the last
// section, in merge order, that set them (a line without + or - sets
// them all), else the main server's, else the configuration's default
// rule, so that no refusal goes under rule_id "-".
func (e *Engine) optionsRule(sections []*translate.Section, bits translate.OptionBits) *policy.Rule {
	for i := len(sections) - 1; i >= 0; i-- {
		o := sections[i].Conf.Options
		if o != nil && o.Rule != nil && (o.Opts&translate.OptUnset == 0 || (o.Add|o.Remove)&bits != 0) {
			return o.Rule
		}
	}
	if o := e.cfg.Defaults.Options; o != nil && o.Rule != nil {
		return o.Rule
	}
	return e.cfg.Default
}

// symlinkRefused logs a symbolic link the options do not allow.
func symlinkRefused(res *Result, code, name string) {
	res.AddLogs([]policy.LogLine{{Module: "core", Code: code, Subject: name}})
}

// indexSymlink is the test the walk of a DirectoryIndex subrequest makes
// of the index file when the directory's options lack FollowSymLinks
// (ap_directory_walk, the walk cache's "familiar" path): it returns 403
// for a link they do not allow.
func (e *Engine) indexSymlink(main *Result, fname string, sub *Result) int {
	if main.dirOpts&translate.OptSymLinks != 0 {
		return 0
	}
	lfi, err := e.fs.Lstat(fname)
	if err != nil {
		return 403 // AH00031: the stat just made failed
	}
	if lfi.Mode()&fs.ModeSymlink == 0 {
		return 0
	}
	if _, ok := e.symlinkOK(fname, lfi, main.dirOpts); !ok {
		symlinkRefused(sub, "AH00032", fname)
		sub.Rule = e.optionsRule(main.Sections[:main.dirN], translate.OptSymLinks|translate.OptSymOwner)
		return 403
	}
	return 0
}

// autoindexForbids reports whether mod_autoindex refuses a request for a
// directory with no DirectoryIndex file: it is loaded, the method is GET
// (or HEAD), and the options in force lack Indexes (handle_autoindex).
func (e *Engine) autoindexForbids(m *merged, method int) bool {
	if m.options&translate.OptIndexes != 0 || method != policy.MethodGet {
		return false
	}
	if m.handler != "" {
		// SetHandler gives the directory another handler: mod_autoindex
		// answers only httpd/unix-directory (its handler checks
		// r->handler), and the other one answers as the backend does.
		return false
	}
	mods := e.cfg.Modules
	return mods == nil || mods["autoindex_module"]
}

// autoindexRefuse makes res mod_autoindex's refusal (AH01276), naming the
// DirectoryIndex names mod_dir tried as its note "dir-index-names" does.
func (e *Engine) autoindexRefuse(res *Result, m *merged) {
	names := "index.html"
	if m.dirIndex != nil {
		names = strings.Join(m.dirIndex, ",")
	}
	e.autoindexRefuseNames(res, m, names)
}

// autoindexRefuseNames is autoindexRefuse with the note's names as given
// ("none" where mod_dir set no note).
func (e *Engine) autoindexRefuseNames(res *Result, m *merged, names string) {
	res.Status, res.Layer, res.Rule = 403, policy.LayerConfig, e.optionsRule(m.sections, translate.OptIndexes)
	res.AddLogs([]policy.LogLine{{Module: "autoindex", Code: "AH01276", Subject: res.Filename, User: names}})
}

// fromSection is fromConf for a section, with the options it merges.
func fromSection(s *translate.Section) accum {
	a := fromConf(s.Conf)
	a.opts, a.hasOpts = optionsOf(s)
	return a
}

// mergeOpts merges the options of o over m's (ap_merge_per_dir_configs:
// a slot the base lacks is taken as it is).
func (m *accum) mergeOpts(o *accum) {
	switch {
	case !o.hasOpts:
	case m.hasOpts:
		m.opts = m.opts.Merge(o.opts)
	default:
		m.opts, m.hasOpts = o.opts, true
	}
}
