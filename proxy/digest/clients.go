package digest

import (
	"container/list"
	"sync"
)

// DefaultMaxClients is the number of clients a Server remembers unless
// Options say otherwise. Apache's default AuthDigestShmemSize (1000 bytes)
// holds only about 14; a forgotten client costs its next request an extra
// round trip (a stale=true challenge), never a wrong grant, so a larger
// table only spares round trips. Each entry takes about 100 bytes.
const DefaultMaxClients = 1 << 14

// numShards bounds the number of independently locked parts of a client
// table.
const numShards = 16

// nonceState is the outcome of checking a nonce and nonce-count against
// what a client last used, as enum nonce_state.
type nonceState int

const (
	nonceAccepted nonceState = iota // recorded as the client's latest
	nonceStale                      // already used, or the client is unknown
	nonceBadCount                   // the count did not increase: a replay
)

// A clientEntry is what is tracked for one client, as client_entry: the
// nonce it last used and the highest nonce-count it used with it.
type clientEntry struct {
	key           uint32
	nonceCount    uint64
	lastNonceTime int64
}

// A clientTable is the bounded table of clients (Apache's client list in
// shared memory), keyed by client number, the number the opaque parameter
// carries. It is split into shards by client number, each with its own
// lock, its own least-recently-used order and its own share of the
// capacity. Looking a client up or recording a nonce for it makes it the
// most recently used; adding a client to a full shard first evicts the
// shard's least recently used client.
//
// Eviction fails closed. A client that is no longer in the table is
// treated as Apache treats a client its garbage collector removed: where
// its state is needed (AuthDigestNcCheck On, or one-time nonces), its
// request is refused with a stale=true challenge carrying a new opaque
// (AH10618), so the client retries with a new nonce-count; nothing of a
// forgotten client is ever accepted on trust. Where its state is not
// needed, a forgotten opaque only makes the next challenge carry a new
// opaque and stale=true.
type clientTable struct {
	shards   []clientShard
	perShard int
}

type clientShard struct {
	mu  sync.Mutex
	m   map[uint32]*list.Element // of *clientEntry
	lru list.List                // front: most recently used
}

func newClientTable(max int) *clientTable {
	if max < 1 {
		max = 1
	}
	n := min(numShards, max)
	t := &clientTable{shards: make([]clientShard, n), perShard: (max + n - 1) / n}
	for i := range t.shards {
		t.shards[i].m = make(map[uint32]*list.Element)
	}
	return t
}

func (t *clientTable) shard(key uint32) *clientShard {
	return &t.shards[key%uint32(len(t.shards))]
}

// capacity is the most clients the table holds at once.
func (t *clientTable) capacity() int { return t.perShard * len(t.shards) }

// add adds client key with no nonce used yet, as add_client, evicting the
// least recently used client of its shard if the shard is full. A client
// with the same number (the counter wrapped) is replaced.
func (t *clientTable) add(key uint32) {
	s := t.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; ok {
		s.lru.Remove(e)
		delete(s.m, key)
	}
	for s.lru.Len() >= t.perShard {
		last := s.lru.Back()
		s.lru.Remove(last)
		delete(s.m, last.Value.(*clientEntry).key)
	}
	s.m[key] = s.lru.PushFront(&clientEntry{key: key})
}

// exists reports whether client key is known, as client_exists, making
// it the most recently used. Key 0 is never known.
func (t *clientTable) exists(key uint32) bool {
	if key == 0 {
		return false
	}
	s := t.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if ok {
		s.lru.MoveToFront(e)
	}
	return ok
}

// update checks the nonce (by its time) and the nonce-count nc of a fully
// verified request against what client key last used, and records them
// if they are acceptable, as client_update_nonce: with one-time nonces
// (oneTime), a nonce is accepted once, if it is newer than the last one
// used; otherwise a newer nonce starts a new count and the same nonce
// must raise it. tracked is the count recorded before, for the log.
func (t *clientTable) update(key uint32, oneTime bool, nonceTime int64, nc uint64) (st nonceState, tracked uint64, known bool) {
	if key == 0 {
		return nonceStale, 0, false
	}
	s := t.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.m[key]
	if !ok {
		return nonceStale, 0, false
	}
	s.lru.MoveToFront(el)
	e := el.Value.(*clientEntry)
	tracked = e.nonceCount
	switch {
	case oneTime:
		st = nonceStale
		if nonceTime > e.lastNonceTime {
			st = nonceAccepted
		}
	case nonceTime > e.lastNonceTime || (nonceTime == e.lastNonceTime && nc > e.nonceCount):
		st = nonceAccepted
	default:
		st = nonceBadCount
	}
	if st == nonceAccepted {
		e.lastNonceTime = nonceTime
		e.nonceCount = nc
	}
	return st, tracked, true
}

// len returns the number of clients in the table.
func (t *clientTable) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += s.lru.Len()
		s.mu.Unlock()
	}
	return n
}
