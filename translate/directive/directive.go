// Package directive is the one table of Apache httpd's directives: every
// directive and section that Apache 2.2 and 2.4 know, from their core and
// the modules Apache ships, with the module that provides it, where it may
// appear (Apache's req_override) and what it can do to a request.
//
// The parser's callers read it to refuse what Apache refuses: a name not in
// the table, or of a module the configuration does not load, is "Invalid
// command" (AH00526), and a directive outside the contexts its override
// allows is "not allowed here". The access model reads Effect to fail
// closed: a directive that can refuse, redirect, limit or change a request
// and that orderly does not evaluate is refused at load, never ignored.
//
// The table is checked against Apache itself: against the directive list
// of Debian's apache2 (apache2 -L with every module it ships loaded) for
// 2.4, and against the directive index of Apache's 2.2 documentation in
// testdata for 2.2 (table_test.go).
//
// It imports nothing of orderly's.
package directive

import (
	"strings"
	"sync"
)

// Version is a set of Apache httpd versions.
type Version uint8

// The versions the table knows.
const (
	V22 Version = 1 << iota // Apache httpd 2.2
	V24                     // Apache httpd 2.4
)

func (v Version) String() string {
	switch v {
	case V22:
		return "2.2"
	case V24:
		return "2.4"
	case V22 | V24:
		return "2.2, 2.4"
	}
	return "none"
}

// Override is Apache's req_override (include/http_config.h): the
// AllowOverride classes under which a directive may appear in .htaccess
// files, and whether it may appear in the configuration files inside and
// outside <Directory>, <Location> and <Files>.
type Override uint16

// The bits of Override, with Apache's values.
const (
	OrLimit    Override = 1    // OR_LIMIT: AllowOverride Limit
	OrOptions  Override = 2    // OR_OPTIONS
	OrFileInfo Override = 4    // OR_FILEINFO
	OrAuthCfg  Override = 8    // OR_AUTHCFG: AllowOverride AuthConfig
	OrIndexes  Override = 16   // OR_INDEXES
	AccessConf Override = 64   // ACCESS_CONF: inside <Directory>, <Location>, <Files>
	RsrcConf   Override = 128  // RSRC_CONF: outside them (server, <VirtualHost>)
	ExecOnRead Override = 256  // EXEC_ON_READ: run while the file is read
	ProxyConf  Override = 2048 // PROXY_CONF: inside <Proxy>

	OrAll = OrLimit | OrOptions | OrFileInfo | OrAuthCfg | OrIndexes
)

// Context is where a directive is met, as Apache's parms->override is set
// while it reads there (server/config.c).
type Context uint8

// The contexts.
const (
	// Server is the main server's configuration and <VirtualHost>: Apache
	// reads it with (RSRC_CONF|OR_ALL) & ~(OR_AUTHCFG|OR_LIMIT).
	Server Context = iota
	// Dir is inside <Directory>, <Location>, <Files> (or their Match
	// forms), <If> and <Proxy>: OR_ALL|ACCESS_CONF.
	Dir
	// Htaccess is an .htaccess file: the AllowOverride classes in force.
	Htaccess
	// Authz is inside <RequireAll>, <RequireAny> or <RequireNone>, in any
	// file: mod_authz_core reads their contents with OR_AUTHCFG alone
	// (add_authz_section), which also drops an .htaccess file's Nonfatal=
	// bits.
	Authz
)

// Allows reports whether a directive with override o may appear in
// context c; for Htaccess, allowed are the AllowOverride classes in force.
// It is invoke_cmd's test (parms->override & cmd->req_override).
func (o Override) Allows(c Context, allowed Override) bool {
	var in Override
	switch c {
	case Server:
		in = (RsrcConf | OrAll) &^ (OrAuthCfg | OrLimit)
	case Dir:
		in = OrAll | AccessConf
	case Htaccess:
		in = allowed & OrAll
	case Authz:
		in = OrAuthCfg
	}
	return o&in != 0
}

// Effect is what a directive can do to a request, in orderly's reading of
// Apache's source.
type Effect uint8

// The effects. Everything but Inert is either evaluated by orderly or
// refused at load.
const (
	// Inert directives cannot make Apache refuse, redirect or limit a
	// request, nor change what access control sees: logging, content
	// handlers and filters, caching, TLS and MPM tuning, MIME types.
	Inert Effect = iota
	// Reads are executed while the configuration is read: Include,
	// <IfModule>, Define, LoadModule, <Macro>.
	Reads
	// Scope directives open the sections that the access decision is made
	// of (<Directory>, <Files>, <Limit>, <If>, ...) or set which
	// directives .htaccess files may hold.
	Scope
	// Decides directives take part in the access decision: authentication,
	// authorization, host access, TLS requirements, method lists.
	Decides
	// Maps directives change which file or handler a URL maps to, or answer
	// with a redirect or an error before it is served: aliases, rewrites,
	// redirects, Options, directory indexes, virtual host selection.
	Maps
	// Limits directives refuse requests by their size, form or method:
	// LimitRequestBody, LimitRequestLine, TraceEnable, HttpProtocolOptions.
	Limits
	// Changes directives change what access control sees of a request:
	// environment variables, the client's address, its headers.
	Changes
)

var effectNames = [...]string{"inert", "reads", "scope", "decides", "maps", "limits", "changes"}

func (e Effect) String() string {
	if int(e) < len(effectNames) {
		return effectNames[e]
	}
	return "unknown"
}

// Info is one row of the table.
type Info struct {
	// Name is the directive's name as its module spells it; a section's
	// has its "<" ("<Directory").
	Name string
	// Module is the identifier of the module that provides it
	// ("access_compat_module"), "core_module" for the core, "http_module"
	// for http_core, and "mpm" for directives every multi-processing
	// module provides.
	Module string
	// In are the versions whose directive this row describes.
	In Version
	// Where is its req_override.
	Where Override
	// Effect is what it can do to a request.
	Effect Effect
	// Args is how Apache's configuration reader takes its arguments: its
	// args_how, which the AP_INIT_* macro of its command table sets.
	Args Args
	// Help is its help string (the command table's errmsg, which
	// apache2 -L prints under it), where Apache's message for a wrong
	// number of arguments quotes it; "" where the message does not.
	Help string
}

// Section reports whether the row is a section (its name starts with "<").
func (i *Info) Section() bool { return strings.HasPrefix(i.Name, "<") }

// Contexts describes Where in the words of Apache's documentation
// ("server config, virtual host, directory, .htaccess").
func (i *Info) Contexts() string {
	var parts []string
	if i.Where&RsrcConf != 0 || i.Where&(OrOptions|OrFileInfo|OrIndexes) != 0 {
		parts = append(parts, "server config", "virtual host")
	}
	if i.Where&(AccessConf|OrAll) != 0 {
		parts = append(parts, "directory")
	}
	if i.Where&OrAll != 0 {
		parts = append(parts, ".htaccess")
	}
	return strings.Join(parts, ", ")
}

// Overrides names the AllowOverride classes of Where, "" if it has none.
func (i *Info) Overrides() string {
	if i.Where&OrAll == OrAll {
		return "All"
	}
	var parts []string
	for _, c := range overrideNames {
		if i.Where&c.bit != 0 {
			parts = append(parts, c.name)
		}
	}
	return strings.Join(parts, ", ")
}

var overrideNames = []struct {
	bit  Override
	name string
}{{OrAuthCfg, "AuthConfig"}, {OrLimit, "Limit"}, {OrOptions, "Options"}, {OrFileInfo, "FileInfo"}, {OrIndexes, "Indexes"}}

var (
	indexOnce sync.Once
	index     map[string][]*Info
)

func buildIndex() {
	index = make(map[string][]*Info, len(table))
	for i := range table {
		k := strings.ToLower(table[i].Name)
		index[k] = append(index[k], &table[i])
	}
	// Names as the table spells them too (as configurations mostly do),
	// to the same rows: found without lowering them.
	for i := range table {
		index[table[i].Name] = index[strings.ToLower(table[i].Name)]
	}
}

// Lookup returns the rows of the directive name (case-insensitive; a
// section's name with its "<") that version v knows: one per module that
// provides it, none if v does not know the name.
func Lookup(name string, v Version) []*Info {
	rows := rowsOf(name)
	var out []*Info
	for _, r := range rows {
		if r.In&v != 0 {
			if out == nil {
				out = make([]*Info, 0, len(rows))
			}
			out = append(out, r)
		}
	}
	return out
}

// rowsOf returns the rows of the directive name, of every version.
func rowsOf(name string) []*Info {
	indexOnce.Do(buildIndex)
	if rows := index[name]; rows != nil {
		return rows
	}
	return index[strings.ToLower(name)]
}

// Known reports whether version v knows the directive name, from any
// module: len(Lookup(name, v)) > 0, without making the list.
func Known(name string, v Version) bool {
	for _, r := range rowsOf(name) {
		if r.In&v != 0 {
			return true
		}
	}
	return false
}

// Find returns the row of the directive name that version v knows from a
// loaded module (loaded is asked for module identifiers; "core_module",
// "http_module" and "mpm" are always loaded), or nil. known reports
// whether v knows the name at all, from any module.
func Find(name string, v Version, loaded func(module string) bool) (info *Info, known bool) {
	for _, r := range rowsOf(name) {
		if r.In&v == 0 {
			continue
		}
		known = true
		switch r.Module {
		case "core_module", "http_module", "mpm":
			return r, true
		}
		if loaded == nil || loaded(r.Module) {
			return r, true
		}
	}
	return nil, known
}

// All returns every row of the table, in its order (by name).
func All() []Info { return table }

// InvalidCommand is Apache's message for a name it does not know
// (server/config.c, AH00526 when it stops the server), with name as
// written.
func InvalidCommand(name string) string {
	return "Invalid command '" + name + "', perhaps misspelled or defined by a module not included in the server configuration"
}
