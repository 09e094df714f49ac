package metadata

// OpenAbove returns the index in tables (the physical tables of one logical table, sorted by
// Min as Snapshot.Logical returns them) of the table whose span is open above, or -1: the
// newest table, the one with the latest Min, when it also has the latest Max. No other table
// holds times after its Max, so a row there cannot be counted twice: the router reads such
// rows (written before the next period's table exists, or by another writer) instead of
// hiding them. An INSERT still needs a table whose span covers its time.
func OpenAbove(tables []Table) int {
	n := len(tables) - 1
	if n < 0 {
		return -1
	}
	for i := range n {
		if !tables[i].Max.Before(tables[n].Max) {
			return -1
		}
	}
	return n
}
