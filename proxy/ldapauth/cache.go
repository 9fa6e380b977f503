package ldapauth

import (
	"sync"
	"sync/atomic"
	"time"
)

// CacheCounters are the counters of one kind of mod_ldap cache, summed
// over the caches of every URL: what the ldap-status page shows, for
// Prometheus metrics.
type CacheCounters struct {
	Hits    uint64 // lookups that found a usable entry
	Misses  uint64 // lookups that found none, or an expired one
	Inserts uint64
	Removes uint64 // entries dropped as expired or replaced
	Purges  uint64 // purges of a full cache (util_ald_cache_purge)
	Entries int    // entries held now
}

// CacheStats are the counters of the three caches of mod_ldap.
type CacheStats struct {
	Search    CacheCounters // LDAPCacheEntries / LDAPCacheTTL: user searches and binds
	Compare   CacheCounters // LDAPOpCacheEntries / LDAPOpCacheTTL: compares (and sub-group lists)
	DNCompare CacheCounters // LDAPOpCacheEntries: DN comparisons on the server
}

// Add adds o's counters and entries to s.
func (s *CacheStats) Add(o CacheStats) {
	s.Search.add(o.Search)
	s.Compare.add(o.Compare)
	s.DNCompare.add(o.DNCompare)
}

// EntriesOnly returns s with the counters at zero and the entries kept.
func (s CacheStats) EntriesOnly() CacheStats {
	return CacheStats{
		Search:    CacheCounters{Entries: s.Search.Entries},
		Compare:   CacheCounters{Entries: s.Compare.Entries},
		DNCompare: CacheCounters{Entries: s.DNCompare.Entries},
	}
}

func (c *CacheCounters) add(o CacheCounters) {
	c.Hits += o.Hits
	c.Misses += o.Misses
	c.Inserts += o.Inserts
	c.Removes += o.Removes
	c.Purges += o.Purges
	c.Entries += o.Entries
}

type counters struct {
	hits, misses, inserts, removes, purges atomic.Uint64
}

func (c *counters) add(to *CacheCounters) {
	to.Hits += c.hits.Load()
	to.Misses += c.misses.Load()
	to.Inserts += c.inserts.Load()
	to.Removes += c.removes.Load()
	to.Purges += c.purges.Load()
}

// opCache is one bounded cache of util_ldap_cache_mgr.c (util_ald_cache_t)
// with its purge: when full, it drops every entry added before the moment
// it became three quarters full, or before now-TTL if that is later; if
// that frees nothing the new entry is not cached. Expiry by TTL on lookup
// is the caller's (each cache has its own rule in util_ldap.c). Safe for
// concurrent use.
type opCache[K comparable, V any] struct {
	mu       sync.Mutex
	max      int
	ttl      time.Duration
	items    map[K]*cacheItem[V]
	fullmark int
	marktime time.Time
	now      func() time.Time
	ctr      *counters
}

type cacheItem[V any] struct {
	v     V
	added time.Time
}

func newOpCache[K comparable, V any](max int, ttl time.Duration, now func() time.Time, ctr *counters) *opCache[K, V] {
	return &opCache[K, V]{max: max, ttl: ttl, items: make(map[K]*cacheItem[V]), fullmark: max / 4 * 3, now: now, ctr: ctr}
}

// get returns a copy of the entry for k. The caller counts the hit or
// miss (an entry may turn out expired).
func (c *opCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	return it.v, true
}

func (c *opCache[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		delete(c.items, k)
		c.ctr.removes.Add(1)
	}
}

// put inserts or replaces the entry for k; an existing entry keeps its
// insertion time. It reports whether the entry is cached.
func (c *opCache[K, V]) put(k K, v V) bool {
	return c.update(k, func(old V, exists bool) (V, bool) { return v, true })
}

// update changes the entry for k under the lock: f gets the current value
// (if any) and returns the new one, or false to leave the cache alone.
func (c *opCache[K, V]) update(k K, f func(old V, exists bool) (V, bool)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, exists := c.items[k]
	var old V
	if exists {
		old = it.v
	}
	nv, ok := f(old, exists)
	if !ok {
		return exists
	}
	if exists {
		it.v = nv
		return true
	}
	if len(c.items) >= c.max {
		c.purge()
		if len(c.items) >= c.max {
			return false // "Purge of LDAP cache failed"
		}
	}
	c.items[k] = &cacheItem[V]{v: nv, added: c.now()}
	c.ctr.inserts.Add(1)
	if len(c.items) == c.fullmark {
		c.marktime = c.now()
	}
	return true
}

// purge is util_ald_cache_purge.
func (c *opCache[K, V]) purge() {
	now := c.now()
	c.ctr.purges.Add(1)
	if t := now.Add(-c.ttl); t.After(c.marktime) {
		c.marktime = t
	}
	for k, it := range c.items {
		if it.added.Before(c.marktime) {
			delete(c.items, k)
			c.ctr.removes.Add(1)
		}
	}
}

func (c *opCache[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// searchNode is util_search_node_t: a user search, and whether a bind with
// a password succeeded (the password is kept as a keyed hash, not as
// Apache keeps it).
type searchNode struct {
	dn       string
	pwHash   [32]byte
	hasPW    bool
	vals     [][]string // the values of each URL attribute
	lastbind time.Time
}

type compareKey struct{ dn, attr, value string }

// compareNode is util_compare_node_t: the result of a compare, and for a
// group's objectClass compare the list of its sub-groups once fetched.
type compareNode struct {
	result       int
	lastcompare  time.Time
	sglProcessed bool
	subgroups    []string
}

// dnCompareKey: Apache keys its DN-compare cache by the required DN
// alone, so that a DN that matched one user matches every later user
// (see the package documentation); this cache keys it by both DNs.
type dnCompareKey struct{ reqDN, dn string }

// urlCaches are the three caches of one AuthLDAPURL (util_url_node_t).
type urlCaches struct {
	search    *opCache[string, searchNode]
	compare   *opCache[compareKey, compareNode]
	dnCompare *opCache[dnCompareKey, struct{}]
}
