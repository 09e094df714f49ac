package tiering_test

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/obroute/obroute/tiering"
)

// TestMarkHot: each time table's window decides is_hot; a row without location that changes
// gets the backend it lives on (its route does not move), and without a location column its
// is_hot is kept; a second run changes nothing.
func TestMarkHot(t *testing.T) {
	ctx := context.Background()
	now := at(t, "2025-03-15 12:00:00") // window: March and February
	st := newStore(t, standardMonths()...)
	st.hot.Exec(t, "UPDATE shard_metadata SET location = NULL WHERE table_name = 'orders_202501'")
	st.hot.Exec(t, "UPDATE shard_metadata SET is_hot = 1 WHERE table_name = 'orders_202412'") // stale mark, location set
	got, err := st.s.MarkHot(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []tiering.Marked{{Table: "orders_202412", Hot: false}, {Table: "orders_202501", Hot: false, Pinned: "hot"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MarkHot: %+v, want %+v", got, want)
	}
	var loc sql.NullString
	var hot int
	if err := st.hot.DB.QueryRow("SELECT location, is_hot FROM shard_metadata WHERE table_name = 'orders_202501'").Scan(&loc, &hot); err != nil || loc.String != "hot" || hot != 0 {
		t.Errorf("orders_202501: location %v, is_hot %d (%v); want hot, 0", loc, hot, err)
	}
	if again, err := st.s.MarkHot(ctx, now); err != nil || len(again) != 0 {
		t.Errorf("second MarkHot: %+v, %v; want nothing", again, err)
	}

	// Without a location column, the role rule places tables: a change of is_hot would move
	// the route, so it is kept.
	st.hot.Exec(t, "ALTER TABLE shard_metadata DROP COLUMN location")
	st.hot.Exec(t, "UPDATE shard_metadata SET is_hot = 1 WHERE table_name = 'orders_202501'")
	got, err = st.s.MarkHot(ctx, now)
	if want := []tiering.Marked{{Table: "orders_202501", Hot: false, Kept: true}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("MarkHot without a location column: %+v, %v; want %+v", got, err, want)
	}
	if err := st.hot.DB.QueryRow("SELECT is_hot FROM shard_metadata WHERE table_name = 'orders_202501'").Scan(&hot); err != nil || hot != 1 {
		t.Errorf("orders_202501 is_hot %d (%v); want it kept at 1", hot, err)
	}
}
