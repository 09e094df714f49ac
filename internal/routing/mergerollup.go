package routing

import (
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/internal/merge"
)

// rollup plans GROUP BY … WITH ROLLUP: the sub-queries group without ROLLUP, sorted by the
// group keys, and the merge adds the subtotal rows and the total after the groups, as the
// server orders them (see merge.Spec.Rollup).
func (p *mergePlanner) rollup() error {
	switch {
	case len(p.sel.OrderBy) > 0:
		return notMergeable("GROUP BY … WITH ROLLUP with ORDER BY: MariaDB refuses it (Incorrect usage of CUBE/ROLLUP and ORDER BY); drop the ORDER BY, the groups come sorted by their keys")
	case p.sel.Having != nil:
		return notMergeable("GROUP BY … WITH ROLLUP with HAVING across several tables: the subtotal rows would need conditions computed by the sub-queries; filter the rows in the application, or narrow the range to one table")
	}
	// The legs' GROUP BY is a copy: the statement's own is printed WITH ROLLUP.
	p.leg.GroupBy = append(sqlparser.GroupBy{}, p.sel.GroupBy...)
	p.spec.Rollup = true
	for _, c := range p.spec.GroupBy {
		p.spec.OrderBy = append(p.spec.OrderBy, merge.OrderKey{Column: c})
	}
	return nil
}
