package merge

import (
	"database/sql/driver"
)

// rollupLevels accumulates, for GROUP BY … WITH ROLLUP, one group per prefix of the group keys:
// levels[k] takes every row whose first k keys are those of the current group (levels[0] every
// row), and ends, as a subtotal row with the other keys NULL, when a row with other first k keys
// comes, or none.
type rollupLevels struct {
	levels []*group
	active []bool
	queue  [][]driver.Value // rows to return before reading on
}

func newRollup(g *grouper) *rollupLevels {
	r := &rollupLevels{levels: make([]*group, len(g.keys)), active: make([]bool, len(g.keys))}
	for i := range r.levels {
		r.levels[i] = g.newGroup()
	}
	return r
}

// add feeds row to every level, starting the levels not yet started with it.
func (r *rollupLevels) add(g *grouper, row []driver.Value) error {
	for k, lv := range r.levels {
		var err error
		if r.active[k] {
			err = g.add(lv, row)
		} else {
			r.active[k] = true
			err = g.start(lv, row)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// end queues the subtotal rows of the levels that end before next (nil: the input ended), most
// detailed first.
func (r *rollupLevels) end(g *grouper, cur *group, next []driver.Value) error {
	same := 0 // leading keys next shares with the current group
	if next != nil {
		for same < len(g.keys) && g.keys[same].compare(cur.row, next) == 0 {
			same++
		}
	} else {
		same = -1
	}
	for k := len(r.levels) - 1; k > same && k >= 0; k-- {
		lv := r.levels[k]
		if err := g.finish(lv); err != nil {
			return err
		}
		for _, c := range g.keys[k:] {
			lv.row[c.col] = nil
			if c.w != nil {
				lv.row[c.w.weight] = nil
			}
		}
		r.active[k] = false
		r.queue = append(r.queue, lv.row)
	}
	return nil
}

// pop returns the next queued row, nil when none.
func (r *rollupLevels) pop() []driver.Value {
	if len(r.queue) == 0 {
		return nil
	}
	row := r.queue[0]
	r.queue = r.queue[1:]
	return row
}
