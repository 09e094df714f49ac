package routing

import (
	"slices"
	"sync"
	"time"

	"github.com/obroute/obroute/merge"
)

// TypesCache remembers, for one split SELECT, the column types one server reports for it
// (read from a sub-query over one table) next to those the sub-queries that combine several
// tables with UNION ALL report, which differ for some types (an ENUM becomes a VARCHAR, the
// precision of some DECIMAL expressions drops). The types one server reports depend on the
// tables' definitions, the session's settings and the arguments' types, all of which also show
// in the UNION's types: an entry is used only for the UNION types it was read with, and only
// for MaxAge. It is safe for concurrent use.
type TypesCache struct {
	mu      sync.Mutex
	entries []typesEntry
}

type typesEntry struct {
	union, one []merge.ColumnType
	at         time.Time
}

// TypesCacheMaxAge bounds how long remembered types are used: a table redefined so that the
// UNION's types stay the same (a VARCHAR becoming an ENUM of values as long) is seen within it.
const TypesCacheMaxAge = 5 * time.Minute

// typesCacheEntries bounds the entries of one statement (sessions with different settings).
const typesCacheEntries = 8

// Lookup returns the types one server reports when the UNIONs report union, if known.
func (c *TypesCache) Lookup(union []merge.ColumnType, now time.Time) ([]merge.ColumnType, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if now.Sub(e.at) < TypesCacheMaxAge && slices.EqualFunc(e.union, union, sameType) {
			return e.one, true
		}
	}
	return nil, false
}

// Empty reports whether no entry is young enough to be used.
func (c *TypesCache) Empty(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if now.Sub(e.at) < TypesCacheMaxAge {
			return false
		}
	}
	return true
}

// Store remembers that the UNIONs report union where one server reports one.
func (c *TypesCache) Store(union, one []merge.ColumnType, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, e := range c.entries {
		if now.Sub(e.at) < TypesCacheMaxAge && !slices.EqualFunc(e.union, union, sameType) {
			kept = append(kept, e)
		}
	}
	if len(kept) >= typesCacheEntries {
		kept = kept[1:]
	}
	c.entries = append(kept, typesEntry{union: union, one: one, at: now})
}

func sameType(a, b merge.ColumnType) bool { return a == b }
