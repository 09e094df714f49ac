// Package rowscan holds what every reader of rows whose columns are known only at run time
// needs: the scan targets of a slice of values.
package rowscan

// Targets returns a pointer to each element of vals, in order, for (*sql.Rows).Scan: a Scan
// into the targets fills vals.
func Targets[T any](vals []T) []any {
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return ptrs
}
