package digest

import (
	"container/list"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestClientTableLRU(t *testing.T) {
	tb := newClientTable(2) // two shards of one: keys 1, 3, 5 share a shard
	tb.add(1)
	tb.add(2)
	if !tb.exists(1) || !tb.exists(2) || tb.exists(0) || tb.exists(3) {
		t.Fatal("lookup")
	}
	tb.add(3) // evicts 1, not 2
	if tb.exists(1) || !tb.exists(2) || !tb.exists(3) || tb.len() != 2 {
		t.Fatal("eviction")
	}

	// One shard of three.
	tb = &clientTable{shards: make([]clientShard, 1), perShard: 3}
	tb.shards[0].m = map[uint32]*list.Element{}
	for k := uint32(1); k <= 3; k++ {
		tb.add(k)
	}
	tb.exists(1)              // 1 becomes the most recently used
	tb.update(2, false, 5, 1) // so does 2
	tb.add(4)                 // evicts 3
	if !tb.exists(1) || !tb.exists(2) || tb.exists(3) || !tb.exists(4) {
		t.Fatal("least recently used")
	}
	// Adding a number again (the counter wrapped) starts it afresh.
	tb.add(2)
	if st, _, _ := tb.update(2, false, 5, 1); st != nonceAccepted {
		t.Fatal("re-added client kept its state")
	}
}

func TestClientTableUpdate(t *testing.T) {
	tb := newClientTable(16)
	tb.add(7)
	steps := []struct {
		oneTime bool
		time    int64
		nc      uint64
		want    nonceState
	}{
		{false, 10, 1, nonceAccepted},
		{false, 10, 1, nonceBadCount},
		{false, 10, 0, nonceBadCount},
		{false, 10, 3, nonceAccepted},
		{false, 9, 100, nonceBadCount}, // an older nonce
		{false, 11, 1, nonceAccepted},  // a newer one restarts the count
		{true, 11, 9, nonceStale},      // one-time: used
		{true, 12, 0, nonceAccepted},
		{true, 12, 5, nonceStale},
		{false, 12, 1<<64 - 1, nonceAccepted},
		{false, 12, 1<<64 - 1, nonceBadCount},
	}
	for i, s := range steps {
		st, _, known := tb.update(7, s.oneTime, s.time, s.nc)
		if !known || st != s.want {
			t.Fatalf("step %d: %v %v, want %v", i, st, known, s.want)
		}
	}
	if st, _, known := tb.update(8, false, 1, 1); known || st != nonceStale {
		t.Fatal("unknown client")
	}
	if st, _, known := tb.update(0, false, 1, 1); known || st != nonceStale {
		t.Fatal("client 0")
	}
}

// TestClientTableConcurrent hammers a small table from many goroutines
// (run with -race): the bound holds, and a count is accepted at most once
// per client and nonce.
func TestClientTableConcurrent(t *testing.T) {
	s := newTestServer(t, 64)
	tb := s.clients
	var wg sync.WaitGroup
	var accepted [8][200]atomic.Int32
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				switch i % 4 {
				case 0:
					s.newClient()
				case 1:
					tb.exists(uint32(i % 100))
				default:
					key := uint32(1 + g%8)
					nc := uint64(i % 200)
					if st, _, _ := tb.update(key, false, 1, nc); st == nonceAccepted {
						accepted[g%8][nc].Add(1)
					}
				}
				if n := tb.len(); n > tb.capacity() {
					t.Errorf("%d clients in a table of %d", n, tb.capacity())
					return
				}
			}
		}(g)
	}
	wg.Wait()
	for k := range accepted {
		for nc := range accepted[k] {
			if n := accepted[k][nc].Load(); n > 1 {
				t.Fatalf("client %d nc %d accepted %d times", k+1, nc, n)
			}
		}
	}
	if tb.capacity() != 64 || tb.len() > 64 {
		t.Fatalf("capacity %d, len %d", tb.capacity(), tb.len())
	}
}

// TestServerConcurrent: concurrent authentications with the nc check
// against one client: each nc is granted at most once.
func TestServerConcurrent(t *testing.T) {
	s := newTestServer(t, 0)
	cfg := NewConfig("R")
	cfg.NcCheck = true
	req := getReq("/x", t0)
	ch := s.Authenticate(&cfg, req, users(t)).Challenge
	headers := make([]string, 50)
	for i := range headers {
		headers[i] = creds(t, ch, "alice", "secret", "R", req, fmt.Sprintf("%08x", i+1)).Encode()
	}
	var granted [50]atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, h := range headers {
				r := *req
				r.Authorization, r.HasAuthorization = h, true
				if s.Authenticate(&cfg, &r, users(t)).Status == 200 {
					granted[i].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for i := range granted {
		if n := granted[i].Load(); n > 1 {
			t.Fatalf("header %d granted %d times", i, n)
		}
		total += int(granted[i].Load())
	}
	if total == 0 {
		t.Fatal("nothing granted")
	}
}
