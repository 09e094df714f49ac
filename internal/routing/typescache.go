package routing

import (
	"slices"
	"sync"
	"time"

	"github.com/obroute/obroute/internal/merge"
)

// TypesCache remembers, for one split SELECT, the column types one server reports for it
// (read from a sub-query over one table: see Plan.TypesProbe). They decide which hidden
// weights the sub-queries are asked for (only text columns need them) and, where every
// sub-query combines several tables with UNION ALL, what the result reports: a UNION's types
// differ from one table's for some types (an ENUM becomes a VARCHAR, a TEXT a MEDIUMTEXT, the
// precision of some DECIMAL expressions drops).
//
// The types depend on the tables' definitions, the session's settings and the arguments'
// types. An entry is used for at most TypesCacheMaxAge, and as one server's types of a UNION
// only for the UNION types it was stored with (by the execution that read it); every
// execution checks the columns whose weights it did not ask for. It is safe for concurrent
// use.
type TypesCache struct {
	mu      sync.Mutex
	entries []*typesEntry
	// derive computes, once per entry, what the statement's rendering needs from the types and
	// the signatures of the weighed collations.
	derive func(one []merge.ColumnType, sigs [][]byte) typesDerived
}

type typesEntry struct {
	union, one []merge.ColumnType
	sigs       [][]byte
	at         time.Time
	typesDerived
}

// typesDerived is what a statement's sub-queries are rendered with for known column types.
type typesDerived struct {
	// skip[i]: snippet i of the leg (a weight) is not asked for.
	skip []bool
	// spec is the merge spec without the weights not asked for.
	spec merge.Spec
	// skipped lists the columns whose weights are not asked for.
	skipped []int
}

// TypesCacheMaxAge bounds how long remembered types are used: a table redefined without a
// change the sub-queries show (a VARCHAR becoming an ENUM of values as long) is seen within it.
const TypesCacheMaxAge = 5 * time.Minute

// typesCacheEntries bounds the entries of one statement (sessions with different settings).
const typesCacheEntries = 8

// known returns the newest entry young enough to be used, nil when there is none.
func (c *TypesCache) known() *typesEntry {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.entries) - 1; i >= 0; i-- {
		if e := c.entries[i]; now.Sub(e.at) < TypesCacheMaxAge {
			return e
		}
	}
	return nil
}

// Forget drops every entry: a sub-query showed that the tables changed.
func (c *TypesCache) Forget() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}

// Lookup returns one server's types for sub-queries whose UNIONs report union, if an entry was
// stored with union.
func (c *TypesCache) Lookup(union []merge.ColumnType) ([]merge.ColumnType, bool) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if now.Sub(e.at) < TypesCacheMaxAge && slices.Equal(e.union, union) {
			return e.one, true
		}
	}
	return nil, false
}

// Store remembers one server's types and the signatures of the weighed collations (see
// Plan.SignatureProbe), read by a probe (union nil) or with the UNION types the sub-queries
// reported.
func (c *TypesCache) Store(union, one []merge.ColumnType, sigs [][]byte) {
	now := time.Now()
	e := &typesEntry{union: union, one: one, sigs: sigs, at: now}
	if c.derive != nil {
		e.typesDerived = c.derive(one, sigs)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, old := range c.entries {
		if now.Sub(old.at) < TypesCacheMaxAge && (union == nil || !slices.Equal(old.union, union)) {
			kept = append(kept, old)
		}
	}
	if len(kept) >= typesCacheEntries {
		kept = kept[1:]
	}
	c.entries = append(kept, e)
}
