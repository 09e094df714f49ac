package routing

// STUB: replaced by the time-routing implementation (issue 4).

import (
	"time"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

// TimeConfig configures hot/cold time routing.
type TimeConfig struct {
	// Tables are the time-sharded logical tables.
	Tables []TimeTable
	// Snapshot returns the current shard metadata snapshot; it must not block.
	Snapshot func() *metadata.Snapshot
	// Clock returns the current time; nil means time.Now. Tests inject a fixed clock.
	Clock func() time.Time
}

// TimeTable configures one time-sharded logical table.
type TimeTable struct {
	Table    string             `yaml:"table"`
	ShardKey string             `yaml:"shard_key"`
	Window   metadata.HotWindow `yaml:"hot_window"`
}

type timeRouter struct {
	cfg    *TimeConfig
	router *Router
}

type timeStatement struct{}

func newTimeRouter(cfg *TimeConfig, r *Router) (*timeRouter, error) {
	return &timeRouter{cfg: cfg, router: r}, nil
}

func (t *timeRouter) now() time.Time {
	if t.cfg.Clock != nil {
		return t.cfg.Clock()
	}
	return time.Now()
}

func (t *timeRouter) analyze(st *Statement) (*timeStatement, error) { return nil, nil }

func (t *timeRouter) route(p *Plan, st *Statement, hints hint.Set, in Input) error { return nil }
