package ldapauth

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestCacheBoundAndPurge(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	var ctr counters
	c := newOpCache[int, int](8, time.Minute, clk.now, &ctr)
	// One entry a second; the 6th (3/4 of 8) sets the mark.
	for i := 0; i < 8; i++ {
		clk.add(time.Second)
		c.put(i, i)
	}
	if c.len() != 8 {
		t.Fatalf("len %d, want 8", c.len())
	}
	// Full: the purge drops what was added before the cache reached its
	// mark (entries 0-4; the 6th set the mark and stays).
	clk.add(time.Second)
	if !c.put(8, 8) {
		t.Fatal("insert into a full cache after a purge failed")
	}
	for i := 0; i < 5; i++ {
		if _, ok := c.get(i); ok {
			t.Errorf("entry %d survived the purge", i)
		}
	}
	for _, i := range []int{5, 6, 7, 8} {
		if _, ok := c.get(i); !ok {
			t.Errorf("entry %d was purged", i)
		}
	}
	if ctr.purges.Load() != 1 || ctr.removes.Load() != 5 {
		t.Errorf("purges %d removes %d, want 1 and 5", ctr.purges.Load(), ctr.removes.Load())
	}
	// Replacing an entry keeps the count.
	c.put(8, 80)
	if v, _ := c.get(8); v != 80 || c.len() != 4 {
		t.Errorf("replace: %d, len %d", v, c.len())
	}
}

func TestCachePurgeFailsWhenAllFresh(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	var ctr counters
	c := newOpCache[int, int](4, time.Hour, clk.now, &ctr)
	for i := 0; i < 4; i++ {
		c.put(i, i)
	}
	// Nothing is older than the mark or the TTL: the purge frees nothing
	// and the entry is not cached ("Purge of LDAP cache failed").
	if c.put(9, 9) {
		t.Fatal("insert succeeded in a full cache whose purge freed nothing")
	}
	if c.len() != 4 {
		t.Fatalf("len %d, want 4", c.len())
	}
	// Past the TTL everything older goes.
	clk.add(2 * time.Hour)
	if !c.put(12, 12) || c.len() != 1 {
		t.Fatalf("after TTL: len %d", c.len())
	}
}

func TestSearchCacheTTL(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	o := DefaultOptions()
	o.Now = clk.now
	o.CacheTTL = 10 * time.Second
	c, err := NewClient(&o)
	if err != nil {
		t.Fatal(err)
	}
	uc := c.cachesFor("ldap://h/")
	h := c.hashPW("pw")
	uc.search.put("(uid=a)", searchNode{dn: "uid=a", pwHash: h, hasPW: true, lastbind: clk.now()})
	cfg := NewConfig(Apache24)
	u, _ := ParseURL("ldap://h/", "")
	cfg.SetURL(u)
	// A hit needs no server: the session has no host to dial.
	s := c.session(cfg, "", "")
	dn, _, err := c.checkUserID(t.Context(), cfg, s, "(uid=a)", "pw")
	if err != nil || dn != "uid=a" {
		t.Fatalf("cached: %q %v", dn, err)
	}
	dn, _, err = c.getUserDN(t.Context(), cfg, s, "(uid=a)")
	if err != nil || dn != "uid=a" {
		t.Fatalf("cached getuserdn: %q %v", dn, err)
	}
	st := c.CacheStats()
	if st.Search.Hits != 2 || st.Search.Entries != 1 {
		t.Errorf("stats %+v", st.Search)
	}
	// Expired: removed on lookup.
	clk.add(11 * time.Second)
	if n, ok := uc.search.get("(uid=a)"); !ok || clk.now().Sub(n.lastbind) <= o.CacheTTL {
		t.Fatal("entry should be there and stale")
	}
	c.opts.Retries = 0
	c.opts.ConnectionTimeout = time.Millisecond
	cfg.Hosts = fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	s = c.session(cfg, "", "")
	if _, _, err := c.checkUserID(t.Context(), cfg, s, "(uid=a)", "pw"); err == nil {
		t.Fatal("stale entry used")
	}
	if c.CacheStats().Search.Entries != 0 {
		t.Error("stale entry kept")
	}
}

func TestCacheDisabled(t *testing.T) {
	o := DefaultOptions()
	o.OpCacheEntries = 0
	c, _ := NewClient(&o)
	if c.cachesFor("ldap://h/") != nil {
		t.Fatal("LDAPOpCacheEntries 0 must turn off every cache, as in mod_ldap")
	}
}

func TestCacheConcurrent(t *testing.T) {
	var ctr counters
	c := newOpCache[int, int](64, time.Minute, time.Now, &ctr)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := (g*7919 + i) % 200
				c.put(k, i)
				c.get(k)
				if i%17 == 0 {
					c.remove(k)
				}
			}
		}(g)
	}
	wg.Wait()
	if n := c.len(); n > 64 {
		t.Fatalf("%d entries in a cache of 64", n)
	}
}
