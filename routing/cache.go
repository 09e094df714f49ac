package routing

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// CacheStats are the counters of the statement-analysis cache.
type CacheStats struct {
	Hits, Misses, Evictions uint64
	Entries                 int
}

// HitRate is Hits / (Hits + Misses), 0 before any lookup.
func (s CacheStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

const cacheShards = 16

// statementCache is a bounded cache of statement analyses keyed by SQL text. A hit takes only
// a shard's read lock and sets the entry's reference bit; eviction is CLOCK (second chance), an
// approximation of LRU that keeps hits free of writes to shared state, so that many client
// sessions running the same statement do not queue on one lock.
type statementCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
	hits   atomic.Uint64
	misses atomic.Uint64
	evicts atomic.Uint64
}

type cacheShard struct {
	mu    sync.RWMutex
	limit int
	items map[string]*cacheEntry
	ring  []*cacheEntry // CLOCK ring, at most limit entries
	hand  int
}

type cacheEntry struct {
	st   *Statement
	used atomic.Bool // referenced since the hand last passed
}

func newStatementCache(size int) *statementCache {
	c := &statementCache{seed: maphash.MakeSeed()}
	per := max((size+cacheShards-1)/cacheShards, 1)
	for i := range c.shards {
		c.shards[i].limit = per
		c.shards[i].items = make(map[string]*cacheEntry, per)
	}
	return c
}

func (c *statementCache) shard(sql string) *cacheShard {
	return &c.shards[maphash.String(c.seed, sql)%cacheShards]
}

func (c *statementCache) get(sql string) (*Statement, bool) {
	s := c.shard(sql)
	s.mu.RLock()
	e, ok := s.items[sql]
	s.mu.RUnlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	if !e.used.Load() {
		e.used.Store(true)
	}
	c.hits.Add(1)
	return e.st, true
}

func (c *statementCache) put(sql string, st *Statement) {
	s := c.shard(sql)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[sql]; ok {
		return
	}
	e := &cacheEntry{st: st}
	s.items[sql] = e
	if len(s.ring) < s.limit {
		s.ring = append(s.ring, e)
		return
	}
	for s.ring[s.hand].used.Load() { // second chance for entries referenced since
		s.ring[s.hand].used.Store(false)
		s.hand = (s.hand + 1) % len(s.ring)
	}
	delete(s.items, s.ring[s.hand].st.SQL)
	s.ring[s.hand] = e
	s.hand = (s.hand + 1) % len(s.ring)
	c.evicts.Add(1)
}

func (c *statementCache) stats() CacheStats {
	st := CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evicts.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		st.Entries += len(s.items)
		s.mu.RUnlock()
	}
	return st
}
