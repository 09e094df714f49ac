// Package rules checks and hands out, from a configuration, what the packages that apply its
// routing rules read: the time tables (their hot windows checked by metadata's calendar) and
// shadow's rule. Package config describes the settings and checks their names and references;
// what only the applying package knows (a hot window's calendar, the shadow algorithms) is
// checked here, once, for connector and tiering alike. Errors are *config.Error naming the setting at fault.
package rules

import (
	"slices"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/shadow"
	"github.com/obroute/obroute/metadata"
)

// TimeTables returns cfg's time-sharded tables, as routing and tiering read them, once their
// hot windows are checked.
func TimeTables(cfg *config.Config) ([]config.TimeTable, error) {
	for _, t := range cfg.TimeTables {
		if err := metadata.HotWindow(t.HotWindow).Validate(); err != nil {
			return nil, &config.Error{Where: "time_tables." + t.Table + ".hot_window", Problem: err.Error()}
		}
	}
	// A copy: a later change to the configuration does not reach the checked tables.
	return slices.Clone(cfg.TimeTables), nil
}

// Shadow returns cfg's shadow rule, validated against cfg's backends; nil when there is none.
func Shadow(cfg *config.Config) (*shadow.Rule, error) {
	s := cfg.Shadow
	if s == nil {
		return nil, nil
	}
	// The rule holds copies: a later change to the configuration does not reach a validated rule.
	r := &shadow.Rule{Shadow: config.Shadow{
		DefaultAlgorithm: s.DefaultAlgorithm,
		Mappings:         slices.Clone(s.Mappings),
		Tables:           slices.Clone(s.Tables),
		Algorithms:       slices.Clone(s.Algorithms),
	}}
	if err := r.Validate(func(name string) bool { return cfg.Backend(name) != nil }); err != nil {
		return nil, &config.Error{Where: "shadow", Problem: err.Error()}
	}
	return r, nil
}
