package routing

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
)

// The shard key's column type decides how a range is read and how each table's clamp is
// written, in the column's own type (a DATE compared with a DATETIME that has a time part meets
// a MariaDB optimiser bug; a TIMESTAMP is read in the session's time zone):
//
//   - DATETIME(p): values are wall clocks, compared as written; the clamp is
//     key >= 'min_time' AND key < 'max_time + 1s'.
//   - DATE: values are days, compared as midnight DATETIMEs; the clamp is
//     key >= DATE'first whole day' AND key <= DATE'day of max_time'.
//   - TIMESTAMP(p): values are instants, read and stored as wall clocks of the session's
//     time zone; shard_metadata's min_time and max_time are UTC instants. The range is mapped
//     to instants and the clamp is written in the session's wall clock (time_instant.go).
//
// The connector reads each physical table's column from information_schema.COLUMNS; the
// configuration may declare it (time_tables.TABLE.shard_key_type). The physical tables of one
// logical table have one type (prepare and migrate create them alike): a table not read yet has
// the type declared or of those read, and two that differ refuse the statement.

// ShardKeyType is the column type of a shard key.
type ShardKeyType uint8

const (
	// ShardKeyUnknown: the column was not read.
	ShardKeyUnknown ShardKeyType = iota
	// ShardKeyDatetime: DATETIME(p).
	ShardKeyDatetime
	// ShardKeyDate: DATE.
	ShardKeyDate
	// ShardKeyTimestamp: TIMESTAMP(p).
	ShardKeyTimestamp
	// ShardKeyOther: a type obroute does not route by (VARCHAR, BIGINT, …).
	ShardKeyOther
)

// ShardKeyTypeOf reads information_schema.COLUMNS.DATA_TYPE.
func ShardKeyTypeOf(dataType string) ShardKeyType {
	switch strings.ToLower(dataType) {
	case "datetime":
		return ShardKeyDatetime
	case "date":
		return ShardKeyDate
	case "timestamp":
		return ShardKeyTimestamp
	}
	return ShardKeyOther
}

// String names the type as SQL does.
func (k ShardKeyType) String() string {
	switch k {
	case ShardKeyDatetime:
		return "DATETIME"
	case ShardKeyDate:
		return "DATE"
	case ShardKeyTimestamp:
		return "TIMESTAMP"
	case ShardKeyOther:
		return "another type"
	}
	return "unknown"
}

// ShardKeyColumn is the shard-key column of one physical table, as its backend describes it.
type ShardKeyColumn struct {
	Type ShardKeyType
	// Digits are the fractional-second digits of a DATETIME(p) or TIMESTAMP(p), 0 to 6.
	Digits int
	// DataType is information_schema.COLUMNS.DATA_TYPE, for messages about other types.
	DataType string
	// OnUpdate: the column is ON UPDATE CURRENT_TIMESTAMP (information_schema.COLUMNS.EXTRA):
	// the server sets it to its own clock in every row an UPDATE changes without assigning it.
	OnUpdate bool
}

// keySummary is the shard-key type of one logical table.
type keySummary struct {
	typ ShardKeyType // ShardKeyUnknown when no table's column was read
	err error        // the tables' types differ, or are not one obroute routes by
}

// keyCache holds the summaries of one snapshot and one publication of the facts.
type keyCache struct {
	snap  *metadata.Snapshot
	facts *storeFacts
	m     map[*config.TimeTable]keySummary
}

// keyOf returns the shard-key type of tt's physical tables in snap.
func (t *timeRouter) keyOf(tt *config.TimeTable, snap *metadata.Snapshot) keySummary {
	facts := t.facts.p.Load()
	if c := t.keys.Load(); c != nil && c.snap == snap && c.facts == facts {
		return c.m[tt]
	}
	c := &keyCache{snap: snap, facts: facts, m: make(map[*config.TimeTable]keySummary, len(t.cfg.Tables))}
	for i := range t.cfg.Tables {
		c.m[&t.cfg.Tables[i]] = t.summarize(&t.cfg.Tables[i], snap, facts)
	}
	t.keys.Store(c)
	return c.m[tt]
}

func (t *timeRouter) summarize(tt *config.TimeTable, snap *metadata.Snapshot, facts *storeFacts) keySummary {
	var s keySummary
	first := ""
	if tt.ShardKeyType != "" {
		s.typ, first = ShardKeyTypeOf(tt.ShardKeyType), "the configuration (shard_key_type)"
	}
	if facts == nil {
		return s
	}
	for _, tb := range t.own(tt, snap.Logical(tt.Table)) {
		k, ok := facts.keys[strings.ToLower(tb.Name)]
		switch {
		case !ok:
			continue
		case k.Type == ShardKeyOther:
			return keySummary{err: errorf("%w: %s of %s is a %s column; obroute routes by DATETIME, DATE and TIMESTAMP shard keys: make it one of them, or route %s statically",
				ErrShardKeyType, tt.ShardKey, tb.Name, strings.ToUpper(k.DataType), tt.Table)}
		case s.typ == ShardKeyUnknown:
			s.typ, first = k.Type, tb.Name
		case s.typ != k.Type:
			return keySummary{err: errorf("%w: %s is a %s in %s and a %s in %s, which the server compares and stores differently; give every physical table of %s one type (ALTER TABLE … MODIFY %s …)",
				ErrShardKeyType, tt.ShardKey, s.typ, first, k.Type, tb.Name, tt.Table, tt.ShardKey)}
		}
	}
	return s
}

// anyTypeExact checks that a statement whose shard-key type is not known yet is routed
// exactly whatever the type: the range read as DATETIME wall clocks is read alike as
// TIMESTAMP instants only in a session whose time zone is UTC, and the DATETIME clamps of
// tables spanning whole days read alike as DATE ones.
func anyTypeExact(tt *config.TimeTable, zone *time.Location, tables []metadata.Table, open string) error {
	midnight := func(tm time.Time) bool { return tm.Equal(dateOf(tm)) }
	for i := range tables {
		tb := &tables[i]
		end := tb.Max.Truncate(time.Second).Add(time.Second)
		if !midnight(tb.Min) || tb.Name != open && !midnight(end) {
			return errorf("%w: obroute has not read the type of %s (from information_schema.COLUMNS of the backend of %s), and the span of %s does not start and end at midnight, where DATETIME and DATE clamps differ; check that the backend answers and that the table exists, or declare time_tables.%s.shard_key_type",
				ErrShardKeyType, tt.ShardKey, tb.Name, tb.Name, tt.Table)
		}
	}
	if !utcZone(zone) {
		return errorf("%w: obroute has not read the type of %s (from information_schema.COLUMNS of the backends of %s), and in a session whose time zone is not UTC a TIMESTAMP is read otherwise than a DATETIME; check that the backends answer and that the tables exist, declare time_tables.%s.shard_key_type, or SET time_zone = '+00:00'",
			ErrShardKeyType, tt.ShardKey, tt.Table, tt.Table)
	}
	return nil
}

// keysHolder is the cache of keyOf.
type keysHolder = atomic.Pointer[keyCache]
