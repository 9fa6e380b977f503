package proxy

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderly-proxy/orderly/proxy/ldapauth"
)

// ldapCollector exports mod_ldap's cache statistics, what Apache's
// ldap-status handler shows (util_ald_cache_display_stats): per kind of
// cache (search, compare, dn_compare) the lookups that hit and missed,
// the entries inserted and removed, the purges of a full cache, and the
// entries held now. The series exist from start-up, at zero without LDAP.
type ldapCollector struct {
	stats atomic.Pointer[func() ldapauth.CacheStats]

	hits, misses, inserts, removes, purges, entries *prometheus.Desc
}

func newLDAPCollector() *ldapCollector {
	kind := []string{"cache"}
	return &ldapCollector{
		hits: prometheus.NewDesc("orderly_ldap_cache_hits_total",
			"LDAP cache lookups that found a usable entry, by cache (search: LDAPCacheEntries, user searches and binds; compare and dn_compare: LDAPOpCacheEntries), as Apache's ldap-status page counts them.", kind, nil),
		misses: prometheus.NewDesc("orderly_ldap_cache_misses_total",
			"LDAP cache lookups that found no entry, or an expired one, by cache.", kind, nil),
		inserts: prometheus.NewDesc("orderly_ldap_cache_inserts_total",
			"Entries added to the LDAP caches, by cache.", kind, nil),
		removes: prometheus.NewDesc("orderly_ldap_cache_removes_total",
			"Entries dropped from the LDAP caches, found expired or purged, by cache.", kind, nil),
		purges: prometheus.NewDesc("orderly_ldap_cache_purges_total",
			"Purges of a full LDAP cache (util_ald_cache_purge), by cache.", kind, nil),
		entries: prometheus.NewDesc("orderly_ldap_cache_entries",
			"Entries the LDAP caches of the configuration in force hold, by cache.", kind, nil),
	}
}

func (c *ldapCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.hits, c.misses, c.inserts, c.removes, c.purges, c.entries} {
		ch <- d
	}
}

func (c *ldapCollector) Collect(ch chan<- prometheus.Metric) {
	var s ldapauth.CacheStats
	if f := c.stats.Load(); f != nil {
		s = (*f)()
	}
	for _, k := range []struct {
		name string
		c    ldapauth.CacheCounters
	}{{"search", s.Search}, {"compare", s.Compare}, {"dn_compare", s.DNCompare}} {
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(k.c.Hits), k.name)
		ch <- prometheus.MustNewConstMetric(c.misses, prometheus.CounterValue, float64(k.c.Misses), k.name)
		ch <- prometheus.MustNewConstMetric(c.inserts, prometheus.CounterValue, float64(k.c.Inserts), k.name)
		ch <- prometheus.MustNewConstMetric(c.removes, prometheus.CounterValue, float64(k.c.Removes), k.name)
		ch <- prometheus.MustNewConstMetric(c.purges, prometheus.CounterValue, float64(k.c.Purges), k.name)
		ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(k.c.Entries), k.name)
	}
}

// SetLDAPStats makes the LDAP cache metrics (orderly_ldap_cache_*) read
// stats at each scrape. Its counters must only grow: across reloads,
// the Identities of successive configurations count into one
// ldapauth.Counters (authfile.Identity.LDAPCounters).
func (m *Metrics) SetLDAPStats(stats func() ldapauth.CacheStats) {
	if m == nil {
		return
	}
	m.ldap.stats.Store(&stats)
}
