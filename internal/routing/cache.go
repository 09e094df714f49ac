package routing

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// CacheStats are the counters of the statement-analysis cache.
type CacheStats struct {
	// Hits count the statements whose analysis was found: under their text, or under their
	// normalized text for a statement that differs from an earlier one in literal values only.
	Hits, Misses, Evictions uint64
	// Uncached counts analyses too large to keep (see config.Config.ParseCacheSize).
	Uncached uint64
	Entries  int
	// Bytes estimates the memory the cached analyses keep alive.
	Bytes int64
}

// HitRate is Hits / (Hits + Misses), 0 before any lookup.
func (s CacheStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

const (
	cacheShards = 16
	// cacheBytes bounds the memory the cached analyses keep alive, whatever their number: a few
	// huge statements (a 4 MB multi-row INSERT) must not hold hundreds of MB.
	cacheBytes = 32 << 20
)

// statementCache is a bounded cache of statement analyses keyed by SQL text or by normalized
// text (see normalize.go), bounded in entries and in bytes. A hit takes only a shard's read
// lock and sets the entry's reference bit; eviction is CLOCK (second chance), an approximation
// of LRU that keeps hits free of writes to shared state, so that many client sessions running
// the same statement do not queue on one lock.
type statementCache struct {
	seed     maphash.Seed
	shards   [cacheShards]cacheShard
	maxEntry int
	hits     atomic.Uint64
	misses   atomic.Uint64
	evicts   atomic.Uint64
	uncached atomic.Uint64
}

type cacheShard struct {
	mu     sync.RWMutex
	limit  int   // entries
	budget int64 // bytes
	bytes  int64
	items  map[string]*cacheEntry
	ring   []*cacheEntry // CLOCK ring, at most limit entries
	hand   int
}

type cacheEntry struct {
	st   *Statement
	key  string
	size int
	mode entryMode
	used atomic.Bool // referenced since the hand last passed
}

// entryMode says which texts an entry's analysis is for.
type entryMode uint8

const (
	// entryText: the key is a statement's text, the analysis that text's.
	entryText entryMode = iota
	// entryShared: the key is a normalized text; the analysis, of one of its texts, is every
	// one's, since routing reads none of its replaced literals.
	entryShared
	// entryArgs: the key is a normalized text; the analysis is the normalized text's, which
	// reads the replaced literals as arguments.
	entryArgs
	// entryByText: the key is a normalized text whose texts are analysed one by one, each
	// kept under its own text; st is nil.
	entryByText
)

// newStatementCache returns a cache of at most size entries and bytes bytes. The largest
// analysis kept is a quarter of a shard's share of bytes: a larger statement is analysed at each
// execution (it is rarely the same text twice), and never pushes out the many small ones.
func newStatementCache(size int, bytes int64) *statementCache {
	c := &statementCache{seed: maphash.MakeSeed(), maxEntry: int(bytes / cacheShards / 4)}
	per := max((size+cacheShards-1)/cacheShards, 1)
	for i := range c.shards {
		c.shards[i].limit = per
		c.shards[i].budget = bytes / cacheShards
		c.shards[i].items = make(map[string]*cacheEntry, min(per, 1024))
	}
	return c
}

// get returns the analysis kept for the text sql (an entryText), counting a hit; a miss is
// counted by the caller, which may find the text under its normalized key.
func (c *statementCache) get(sql string) (*Statement, bool) {
	s := &c.shards[maphash.String(c.seed, sql)%cacheShards]
	s.mu.RLock()
	e, ok := s.items[sql]
	s.mu.RUnlock()
	if !ok || e.mode != entryText {
		return nil, false
	}
	c.hit(e)
	return e.st, true
}

// find returns the entry of a normalized key, nil when there is none; it counts nothing.
func (c *statementCache) find(key []byte) *cacheEntry {
	s := &c.shards[maphash.Bytes(c.seed, key)%cacheShards]
	s.mu.RLock()
	e := s.items[string(key)]
	s.mu.RUnlock()
	return e
}

// hit counts a hit on e and marks it referenced.
func (c *statementCache) hit(e *cacheEntry) {
	if !e.used.Load() {
		e.used.Store(true)
	}
	c.hits.Add(1)
}

// put keeps st under key (nil for an entryByText).
func (c *statementCache) put(key string, st *Statement, mode entryMode) {
	size := 64 + len(key)
	if st != nil {
		size = st.size() + len(key)
		if mode == entryText {
			size -= len(key) // the key is st.SQL
		}
	}
	if size > c.maxEntry {
		c.uncached.Add(1)
		return
	}
	s := &c.shards[maphash.String(c.seed, key)%cacheShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[key]; ok {
		return
	}
	for len(s.ring) > 0 && (len(s.ring) >= s.limit || s.bytes+int64(size) > s.budget) {
		s.evict()
		c.evicts.Add(1)
	}
	e := &cacheEntry{st: st, key: key, size: size, mode: mode}
	s.items[key] = e
	s.ring = append(s.ring, e)
	s.bytes += int64(size)
}

// evict removes the first entry under the hand not referenced since the hand last passed it.
func (s *cacheShard) evict() {
	for s.ring[s.hand].used.Load() { // second chance for entries referenced since
		s.ring[s.hand].used.Store(false)
		s.hand = (s.hand + 1) % len(s.ring)
	}
	e := s.ring[s.hand]
	last := len(s.ring) - 1
	s.ring[s.hand] = s.ring[last]
	s.ring[last] = nil
	s.ring = s.ring[:last]
	if s.hand >= len(s.ring) {
		s.hand = 0
	}
	delete(s.items, e.key)
	s.bytes -= int64(e.size)
}

func (c *statementCache) stats() CacheStats {
	st := CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evicts.Load(), Uncached: c.uncached.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		st.Entries += len(s.items)
		st.Bytes += s.bytes
		s.mu.RUnlock()
	}
	return st
}

// size estimates the bytes a cached analysis keeps alive: its texts, its rewrite templates and
// a fixed part for the rest.
func (st *Statement) size() int {
	n := 512 + len(st.SQL) + len(st.logText) + len(st.NextTransaction) + 16*len(st.Tables)
	for _, v := range st.Vars {
		n += 64 + len(v.Assignment) + len(v.Name) + len(v.Value)
	}
	for _, c := range st.aside {
		n += 32 + len(c.text)
	}
	for _, tr := range st.shadowReads {
		n += tr.size()
	}
	if st.Explained != nil {
		n += st.Explained.size()
	}
	if c := st.Control; c != nil {
		n += 128 + len(c.Name) + len(c.Text) + len(c.TextVar)
		if c.Prepared != nil {
			n += c.Prepared.size()
		}
	}
	for _, pc := range st.pieces {
		n += pc.size()
	}
	if ts := st.time; ts != nil {
		n += ts.whole.bytes()
		if ts.merge != nil {
			n += ts.merge.legT.bytes() + ts.merge.probeT.bytes() + len(ts.merge.outer)
		}
		if ts.insert != nil {
			for i := range ts.insert.rows {
				n += ts.insert.rows[i].bytes() + 64
			}
		}
	}
	return n
}

// bytes estimates the memory of a template: its text and pieces.
func (t *template) bytes() int { return 64 + t.size + 32*len(t.pieces) + 8*len(t.args) }
