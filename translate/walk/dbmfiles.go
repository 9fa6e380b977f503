package walk

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// DBMChecker is what an Identity adds to refuse, when orderly serve loads
// a configuration, the DBM files it names that orderly cannot read (see
// authfile's Identity.CheckDBMFile): a file of a type other than SDBM.
// Apache reads them through apr-util's drivers on each request; orderly
// would answer 500 where Apache grants. An Engine whose Identity lacks
// it (orderly lint's) refuses none.
type DBMChecker interface {
	// CheckDBMFile returns the refusal of the DBM file named file (as
	// the configuration names it) of the type dbmType (AuthDBMType,
	// AuthzDBMType), or nil.
	CheckDBMFile(file, dbmType string) error
}

// DBMError returns orderly serve's refusals of the DBM files the
// configuration names (in the sections of its main server and of its
// virtual hosts, and in its <AuthnProviderAlias> sections), each
// "file:line: message" with the line that names the file; nil if there
// are none, or if the Engine's Identity is no DBMChecker.
//
// mod_authn_dbm and mod_authz_dbm have no merger: a section that sets
// AuthDBMUserFile (AuthDBMGroupFile) gets the type it sets beside it, or
// "default", so each section's pair is one a request can meet.
// AuthDBMUserFile and AuthDBMGroupFile have their own types (AuthDBMType,
// AuthzDBMType). The .htaccess files are checked as they are read
// (htaccessDBM).
func (e *Engine) DBMError() error {
	dc, ok := e.id.(DBMChecker)
	if !ok {
		return nil
	}
	c := dbmCheck{dc: dc, seen: map[*translate.DirConf]bool{}}
	c.config(e.cfg)
	for _, h := range e.hosts {
		c.config(h.v.Config) // the main server's sections again, checked once
	}
	if len(c.el) == 0 {
		return nil
	}
	return c.el
}

// dbmCheck gathers the refusals of DBMError, each section's once.
type dbmCheck struct {
	dc   DBMChecker
	seen map[*translate.DirConf]bool
	el   apacheconf.ErrorList
}

// config checks the DBM files of cfg's sections: its provider aliases,
// then each kind of section in configuration order. AuthDBMUserFile and
// AuthDBMGroupFile are not allowed outside a section (OR_AUTHCFG).
func (c *dbmCheck) config(cfg *translate.Config) {
	for _, a := range sortedAliases(cfg) {
		c.conf(a.Conf)
	}
	for _, list := range [][]*translate.Section{cfg.Dirs, cfg.DirMatches, cfg.Files, cfg.Locations} {
		for _, s := range list {
			c.section(s)
		}
	}
}

// section checks the DBM files of a section and of the <Files> sections
// nested in it.
func (c *dbmCheck) section(s *translate.Section) {
	c.conf(s.Conf)
	if s.Conf != nil {
		for _, f := range s.Conf.Files {
			c.section(f)
		}
	}
}

// conf checks the DBM user and group files one section sets.
func (c *dbmCheck) conf(d *translate.DirConf) {
	if d == nil || c.seen[d] {
		return
	}
	c.seen[d] = true
	if a := d.AuthnDBM; a != nil && a.UserFile != "" {
		if err := c.dc.CheckDBMFile(a.UserFile, a.Type); err != nil {
			c.el = append(c.el, dbmRefusal(a.Pos, "AuthDBMUserFile", a.UserFile, err))
		}
	}
	// 2.2's AuthDBMGroupFile, which orderly does not evaluate, leaves the
	// type unset: it is refused, or ignored, as such.
	if d.DBMGroupFile != nil && *d.DBMGroupFile != "" && d.DBMGroupType != nil {
		if err := c.dc.CheckDBMFile(*d.DBMGroupFile, *d.DBMGroupType); err != nil {
			c.el = append(c.el, dbmRefusal(d.DBMGroupPos, "AuthDBMGroupFile", *d.DBMGroupFile, err))
		}
	}
}

// sortedAliases returns cfg's provider aliases in the order of their
// sections.
func sortedAliases(cfg *translate.Config) []*translate.ProviderAlias {
	out := slices.Collect(maps.Values(cfg.ProviderAliases))
	slices.SortFunc(out, func(a, b *translate.ProviderAlias) int {
		return cmp.Or(strings.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line))
	})
	return out
}

// dbmRefusal is the refusal of the DBM file that the directive name at
// pos names, for the reason err (which starts with the file's name where
// orderly reads it at the same place).
func dbmRefusal(pos apacheconf.Pos, name, file string, err error) *apacheconf.Error {
	msg := strings.TrimPrefix(err.Error(), file+": ")
	return &apacheconf.Error{Pos: pos, Msg: name + " " + file + ": " + msg + "; refusing to load", Own: true}
}

// htaccessDBM is DBMError for an .htaccess file as it is read: its
// refusals make the file one that does not load (500 for its directory
// and below), orderly's own.
func (e *Engine) htaccessDBM(sec *translate.Section) error {
	dc, ok := e.id.(DBMChecker)
	if !ok || sec == nil {
		return nil
	}
	c := dbmCheck{dc: dc, seen: map[*translate.DirConf]bool{}}
	c.section(sec)
	if len(c.el) > 0 {
		return c.el
	}
	return nil
}
