package main

// The policies a configuration names, loaded as serve, check, explain
// and init load them.

import (
	"errors"
	"fmt"
	"io"

	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// ldapCounters are the counters of the LDAP caches of every
// configuration this process loads, so that the metrics of a reloaded
// configuration's caches carry on from the replaced one's
// (proxy.Metrics.SetLDAPStats).
var ldapCounters = ldapauth.NewCounters()

// setup reads the HCL file and the policies it names: the legacy
// configuration (and, with rules demoted, the same without them) and the
// native one.
func setup(path string, stderr io.Writer) (*runtimeConfig, *proxy.Policies, bool) {
	rc, _, diags := loadConfig(path)
	if diags.HasErrors() {
		printDiags(stderr, diags)
		return nil, nil, false
	}
	p := &proxy.Policies{Scopes: rc.Scopes, Mode: rc.Mode, Demoted: rc.Demote}
	var ok bool
	if p.Legacy, ok = loadEngine(path, rc.LegacyFiles, rc.Legacy, rc.PathMap, rc, stderr); !ok {
		return nil, nil, false
	}
	if len(rc.Demote) > 0 {
		opt := rc.Legacy
		opt.Omit = rc.Demote
		if p.LegacyEnforced, ok = loadEngine(path, rc.LegacyFiles, opt, rc.PathMap, rc, stderr); !ok {
			return nil, nil, false
		}
	}
	if rc.Native != nil {
		if p.Native, ok = loadEngine(path, rc.NativeFiles, *rc.Native, rc.NativePathMap, rc, stderr); !ok {
			return nil, nil, false
		}
	}
	return rc, p, true
}

// loadEngine loads one configuration into a decision engine, printing
// what it refuses.
func loadEngine(path string, files []string, opt translate.LoadOptions, pathMap map[string]string, rc *runtimeConfig, stderr io.Writer) (*walk.Engine, bool) {
	e, err := buildEngine(path, files, opt, pathMap, rc)
	if err != nil {
		printErrs(stderr, err)
		return nil, false
	}
	return e, true
}

// buildEngine loads one configuration into a decision engine, or says
// why serve would refuse it: an apacheconf.ErrorList from the load or of
// the DBM files it cannot read, or one error (the document root, an
// IP-based virtual host, mod_ssl's CA list) already naming where.
func buildEngine(path string, files []string, opt translate.LoadOptions, pathMap map[string]string, rc *runtimeConfig) (*walk.Engine, error) {
	cfg, err := translate.Load(files, opt)
	if err != nil {
		return nil, err
	}
	var fsys walk.FS = walk.OS
	id := proxy.NewIdentity()
	id.LDAPCounters = ldapCounters
	if len(pathMap) > 0 {
		pm := walk.NewPathMap(walk.OS, pathMap)
		fsys, id.Map = pm, pm.Map
	}
	// The walk reads the document root as Apache does (directories,
	// files, .htaccess); without it orderly would decide blind.
	if fi, err := fsys.Stat(cfg.DocumentRoot); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("%s: document root %s: %v: orderly must read the files Apache serves to decide as it does", path, cfg.DocumentRoot, err)
	}
	if err := ipHosts(cfg, rc); err != nil {
		return nil, err
	}
	e := walk.New(cfg, fsys, id)
	if err := e.SSLError(); err != nil {
		// mod_ssl's CA list, which Apache would not start without.
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if err := e.DBMError(); err != nil {
		// DBM files of a type orderly does not read (Berkeley DB, GDBM,
		// NDBM), which Apache reads on each request.
		return nil, err
	}
	if err := e.LDAPError(); err != nil {
		// mod_ldap's certificate files, which Apache would not start
		// without: an apacheconf.ErrorList, each at its line.
		return nil, err
	}
	e.SetLegacyAddress(rc.LegacyIP, rc.LegacyPort)
	return e, nil
}

// ipHosts refuses a configuration with an IP-based <VirtualHost> when
// legacy.address does not say which address of the legacy server the
// traffic stands for: Apache chooses such a host by the address the
// request came in on, which orderly cannot see behind a proxy, and would
// otherwise decide with the main server's rules.
func ipHosts(cfg *translate.Config, rc *runtimeConfig) error {
	if rc.LegacyIP.IsValid() {
		return nil
	}
	for _, v := range cfg.VHosts {
		for _, a := range v.Addrs {
			if !a.Wildcard {
				return fmt.Errorf("%s: <VirtualHost %s> is chosen by the address a request reaches the legacy server on: set legacy.address to the address (and port) this traffic stands for", v.Pos, a.IP)
			}
		}
	}
	return nil
}

// serve's Identity refuses the DBM files it cannot read (Engine.DBMError).
var _ walk.DBMChecker = (*proxy.Identity)(nil)
