package tiering_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
	"github.com/obroute/obroute/tiering"
)

// TestTimestampKeyWindowCountsUTC: with loc=Asia/Tokyo, the clock of mark-hot, prepare and
// migrate is given as Tokyo's wall clock (the calendar of a DATETIME key's metadata). A
// TIMESTAMP key's metadata are UTC instants, and routing counts its window on UTC's calendar:
// at 2026-11-30 20:00 UTC (December 1st in Tokyo) October is still in a window of the current
// month and one before. Tiering counted Tokyo's calendar: it marked October cold, found it due
// and moved it while routing still held it hot.
func TestTimestampKeyWindowCountsUTC(t *testing.T) {
	ctx := context.Background()
	bs := sqltest.Shared(t, "hot", "cold")
	hot := bs[0]
	if err := metadata.CreateTable(ctx, hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ name, min, max string }{
		{"orders_202610", "2026-10-01 00:00:00", "2026-10-31 23:59:59"},
		{"orders_202611", "2026-11-01 00:00:00", "2026-11-30 23:59:59"},
	} {
		hot.Exec(t, "CREATE TABLE "+m.name+" (id BIGINT PRIMARY KEY, order_time TIMESTAMP NOT NULL DEFAULT '2026-01-01 00:00:00', KEY (order_time))")
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES (?, ?, ?, 1, 'hot')", m.name, m.min, m.max)
	}
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: hot.DSN + "&loc=Asia%2FTokyo"},
			{Name: "cold", Role: "cold", DSN: bs[1].DSN + "&loc=Asia%2FTokyo"},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 1}}},
		Metadata:   config.Metadata{Backend: "hot"},
	}
	s, err := tiering.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	w := time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC).In(tokyo) // as obroute's commands give it
	now := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
	marked, err := s.MarkHot(ctx, now)
	if err != nil || len(marked) != 0 {
		t.Errorf("MarkHot at %s Tokyo: %+v, %v; want nothing changed (October and November hot)", now.Format(time.DateTime), marked, err)
	}
	due, err := s.DueMoves(ctx, "orders", tiering.MoveOptions{Now: now})
	if err != nil || len(due) != 0 {
		t.Errorf("DueMoves: %v, %v; want none", due, err)
	}
	if _, err := s.PlanMove(ctx, "orders_202610", tiering.MoveOptions{Now: now}); !errors.Is(err, tiering.ErrNotMovable) {
		t.Errorf("PlanMove of orders_202610: %v; want %v (in the hot window)", err, tiering.ErrNotMovable)
	}
	// A day later in UTC, October has left the window.
	if _, err := s.PlanMove(ctx, "orders_202610", tiering.MoveOptions{Now: now.Add(24 * time.Hour)}); err != nil {
		t.Errorf("PlanMove of orders_202610 on December 2nd: %v", err)
	}
}
