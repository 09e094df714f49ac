package difftest

import (
	"fmt"
	"math/rand/v2"
)

// draw is the seeded random source of a query generator: the same seed draws the same
// queries, so a failure is replayed from the printed seed.
type draw struct {
	seed uint64
	rng  *rand.Rand
}

// newDraw returns the source for seed; stream tells the generators apart, so that two
// generators of one seed draw differently.
func newDraw(seed, stream uint64) draw {
	return draw{seed: seed, rng: rand.New(rand.NewPCG(seed, stream))}
}

// queryDraw is the source of a generator of queries over one logical table: its draws and the
// table's configuration.
type queryDraw struct {
	draw
	cfg QueryConfig
}

// newQueryDraw returns the source of a query generator for seed over cfg.
func newQueryDraw(seed, stream uint64, cfg QueryConfig) queryDraw {
	return queryDraw{draw: newDraw(seed, stream), cfg: cfg}
}

// Seed returns the generator's seed.
func (d *draw) Seed() uint64 { return d.seed }

// dir draws an ORDER BY direction: " DESC" or "" (ascending).
func (d *draw) dir() string {
	if d.rng.IntN(2) == 0 {
		return " DESC"
	}
	return ""
}

// pick returns n of items, in random order; items is left as it is.
func (d *draw) pick(items []string, n int) []string {
	items = append([]string(nil), items...)
	d.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	return items[:min(n, len(items))]
}

// literalLimit draws, with a probability of one in ways each, " LIMIT n" or " LIMIT n OFFSET o"
// with literal numbers; otherwise no LIMIT ("").
func (d *draw) literalLimit(ways int) string {
	switch d.rng.IntN(ways) {
	case 0:
		return fmt.Sprintf(" LIMIT %d", 1+d.rng.IntN(20))
	case 1:
		return fmt.Sprintf(" LIMIT %d OFFSET %d", 1+d.rng.IntN(20), d.rng.IntN(15))
	}
	return ""
}
