package routing

import (
	"container/list"
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

// statementCache is a bounded LRU of statement analyses keyed by SQL text, sharded to keep
// lock contention low under many client sessions.
type statementCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
	hits   atomic.Uint64
	misses atomic.Uint64
	evicts atomic.Uint64
}

type cacheShard struct {
	mu    sync.Mutex
	limit int
	items map[string]*list.Element
	order list.List // front = most recently used; values are *Statement
}

func newStatementCache(size int) *statementCache {
	c := &statementCache{seed: maphash.MakeSeed()}
	per := (size + cacheShards - 1) / cacheShards
	for i := range c.shards {
		c.shards[i].limit = per
		c.shards[i].items = make(map[string]*list.Element, per)
	}
	return c
}

func (c *statementCache) shard(sql string) *cacheShard {
	return &c.shards[maphash.String(c.seed, sql)%cacheShards]
}

func (c *statementCache) get(sql string) (*Statement, bool) {
	s := c.shard(sql)
	s.mu.Lock()
	e, ok := s.items[sql]
	if ok {
		s.order.MoveToFront(e)
	}
	s.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e.Value.(*Statement), true
}

func (c *statementCache) put(sql string, st *Statement) {
	s := c.shard(sql)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[sql]; ok {
		return
	}
	s.items[sql] = s.order.PushFront(st)
	if s.order.Len() > s.limit {
		last := s.order.Back()
		s.order.Remove(last)
		delete(s.items, last.Value.(*Statement).SQL)
		c.evicts.Add(1)
	}
}

func (c *statementCache) stats() CacheStats {
	st := CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evicts.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.Entries += s.order.Len()
		s.mu.Unlock()
	}
	return st
}
