package main

import (
	"flag"
	"time"

	"github.com/obroute/obroute/tiering"
)

// storeFlags are the flags of the commands that operate the hot/cold store: the obroute
// configuration and the clock.
type storeFlags struct {
	config, dsn, now *string
}

func addStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{
		config: fs.String("config", "", "obroute YAML configuration"),
		dsn:    fs.String("dsn", "", "obroute DSN"),
		now:    fs.String("now", "", "the clock"),
	}
}

// parseOpen parses the command's flags (no positional argument) and opens the store.
func (f storeFlags) parseOpen(fs *flag.FlagSet, args []string) (*tiering.Store, time.Time, error) {
	if err := parseNoArgs(fs, args); err != nil {
		return nil, time.Time{}, err
	}
	return f.open()
}

// open reads the configuration and opens the store; now is the clock as the wall clock of the
// shard-key times: the zone of the backends' loc (UTC by default), as routing reads them.
func (f storeFlags) open() (s *tiering.Store, now time.Time, err error) {
	cfg, err := loadConfig(*f.config, *f.dsn)
	if err != nil {
		return nil, time.Time{}, err
	}
	now = time.Now()
	if *f.now != "" {
		if now, err = parseNow(*f.now); err != nil {
			return nil, time.Time{}, err
		}
	}
	if s, err = tiering.Open(cfg); err != nil {
		return nil, time.Time{}, err
	}
	return s, wallClock(now, cfg.Backends[0].MySQL.Loc), nil
}
