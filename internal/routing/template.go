package routing

// AppendTemplate appends the template of the statement sql to dst and returns the result: the
// text that statements differing from sql in literal values only share, as the statement-analysis
// cache keys them (see normalize.go), with each replaced literal written as a ? placeholder; sql
// itself when the cache keys it by its own text (no literal to replace, or not a SELECT, INSERT,
// REPLACE, UPDATE, DELETE or WITH). It is what `obroute check` groups a workload's statements by.
func AppendTemplate(dst []byte, sql string) []byte {
	var (
		key  [1024]byte
		lits [16]literal
	)
	n, ok := normalizeLiterals(sql, key[:0], lits[:0], false)
	if !ok {
		return append(dst, sql...)
	}
	for _, c := range n.key[1:] {
		if c == strMark || c == numMark {
			c = '?'
		}
		dst = append(dst, c)
	}
	return dst
}
