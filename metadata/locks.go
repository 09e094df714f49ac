package metadata

import (
	"fmt"
	"hash/crc32"
)

// Named locks (GET_LOCK) on the metadata backend keep the operations that read or change the
// definitions of a time-sharded table's physical tables apart. Named locks are server-wide, so
// each name carries the database of the shard metadata, within the 64 characters MySQL allows.

// MoveLockName is the lock obroute migrate holds while it moves table (a physical table) of the
// shard metadata in database db.
func MoveLockName(db, table string) string { return lockName("obroute_migrate.", db, table) }

// DDLLockName is the lock held, for the time-sharded table logical of the shard metadata in
// database db, by DDL on it run through obroute (on each physical table) and by obroute
// metadata prepare while it creates tables LIKE the newest one: neither runs while the other
// does, so a table prepare adds has the definition the DDL left.
func DDLLockName(db, logical string) string { return lockName("obroute_ddl.", db, logical) }

func lockName(kind, db, name string) string {
	n := kind + db + "." + name
	if len(n) > 64 {
		n = fmt.Sprintf("%s%08x", kind, crc32.ChecksumIEEE([]byte(db+"."+name)))
	}
	return n
}
