package gormtest

import (
	"database/sql"
	"fmt"
	"reflect"
	"testing"
	"time"

	gmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// Order is the model of the time-sharded table orders.
type Order struct {
	ID        int       `gorm:"primaryKey;autoIncrement:false"`
	OrderTime time.Time `gorm:"not null;index:ix_time"`
	Amount    float64   `gorm:"type:decimal(10,2)"`
}

// OrderWithNote is Order with one field more, indexed.
type OrderWithNote struct {
	ID        int       `gorm:"primaryKey;autoIncrement:false"`
	OrderTime time.Time `gorm:"not null;index:ix_time"`
	Amount    float64   `gorm:"type:decimal(10,2)"`
	Note      string    `gorm:"size:40;index:ix_note"`
}

func (Order) TableName() string         { return "orders" }
func (OrderWithNote) TableName() string { return "orders" }

const ordersDDL = "(id BIGINT NOT NULL PRIMARY KEY, order_time DATETIME(3) NOT NULL, amount DECIMAL(10,2), KEY ix_time (order_time))"

// open returns GORM on db, silent.
func open(t *testing.T, db *sql.DB) *gorm.DB {
	t.Helper()
	g, err := gorm.Open(gmysql.New(gmysql.Config{Conn: db}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// tableCount counts the tables named name on backend b.
func tableCount(t *testing.T, b *sqltest.Backend, name string) int {
	t.Helper()
	var n int
	if err := b.DB.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// columns lists the columns of table on b.
func columns(t *testing.T, b *sqltest.Backend, table string) []string {
	t.Helper()
	rows, err := b.DB.Query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		out = append(out, c)
	}
	return out
}

// GORM's Migrator through obroute sees the time-sharded table orders as one table: HasTable,
// HasColumn, HasIndex and ColumnTypes answer as they do on one server holding orders, AutoMigrate
// of its model creates no physical table named orders, and a model with a field more alters
// every physical table, hot and cold. (ColumnTypes reads SELECT * FROM orders LIMIT 1, which
// needs allow_full_scan or a default_range.)
func TestAutoMigrateOnTimeShardedTable(t *testing.T) {
	bs := sqltest.Shared(t, "hot", "cold", "one")
	hot, cold, one := bs[0], bs[1], bs[2]
	var tables metadata.StaticSource
	var names []string
	for i := range 4 {
		from := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC).AddDate(0, i, 0)
		name := "orders_" + from.Format("200601")
		b := cold
		if i >= 2 {
			b = hot
		}
		names = append(names, name)
		tables = append(tables, metadata.Table{Name: name, Min: from, Max: from.AddDate(0, 1, 0).Add(-time.Second), Hot: b == hot})
		if _, err := b.DB.Exec("CREATE TABLE " + name + " " + ordersDDL); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := one.DB.Exec("CREATE TABLE orders " + ordersDDL); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}, {Name: "cold", Role: "cold", DSN: cold.DSN}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 1}, AllowFullScan: true}},
	}
	now := time.Date(2026, 12, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithMetadataSource(tables), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	through, ref := open(t, db), open(t, one.DB)

	// The Migrator's questions, answered as by one server.
	type answers struct {
		Table, Column, Index, NoColumn, NoIndex bool
		Types                                   []string
	}
	ask := func(g *gorm.DB) answers {
		m := g.Migrator()
		a := answers{Table: m.HasTable(&Order{}), Column: m.HasColumn(&Order{}, "order_time"), Index: m.HasIndex(&Order{}, "ix_time"),
			NoColumn: m.HasColumn(&OrderWithNote{}, "note"), NoIndex: m.HasIndex(&OrderWithNote{}, "ix_note")}
		types, err := m.ColumnTypes(&Order{})
		if err != nil {
			t.Fatalf("ColumnTypes: %v", err)
		}
		for _, ct := range types {
			full, _ := ct.ColumnType()
			nullable, _ := ct.Nullable()
			pk, _ := ct.PrimaryKey()
			a.Types = append(a.Types, fmt.Sprintf("%s %s null=%v pk=%v %s", ct.Name(), full, nullable, pk, ct.DatabaseTypeName()))
		}
		return a
	}
	got, want := ask(through), ask(ref)
	if !reflect.DeepEqual(got, want) || !want.Table || !want.Column || !want.Index || want.NoColumn || want.NoIndex {
		t.Fatalf("Migrator through obroute: %+v\none server: %+v", got, want)
	}

	for _, g := range []*gorm.DB{through, ref} {
		if err := g.AutoMigrate(&Order{}); err != nil {
			t.Fatalf("AutoMigrate(Order): %v", err)
		}
	}
	for _, b := range []*sqltest.Backend{hot, cold} {
		if n := tableCount(t, b, "orders"); n != 0 {
			t.Fatalf("AutoMigrate created a physical table orders on %s", b.Name)
		}
	}
	for _, g := range []*gorm.DB{through, ref} {
		if err := g.AutoMigrate(&OrderWithNote{}); err != nil {
			t.Fatalf("AutoMigrate(OrderWithNote): %v", err)
		}
	}
	wantCols := columns(t, one, "orders")
	for i, name := range names {
		b := cold
		if i >= 2 {
			b = hot
		}
		if got := columns(t, b, name); !reflect.DeepEqual(got, wantCols) || len(got) != 4 {
			t.Errorf("%s on %s has columns %v, one server's orders %v", name, b.Name, got, wantCols)
		}
	}
	if m := through.Migrator(); !m.HasColumn(&OrderWithNote{}, "note") || !m.HasIndex(&OrderWithNote{}, "ix_note") {
		t.Errorf("after AutoMigrate the new column or index is not seen through obroute")
	}
	for _, b := range []*sqltest.Backend{hot, cold} {
		if n := tableCount(t, b, "orders"); n != 0 {
			t.Errorf("AutoMigrate created a physical table orders on %s", b.Name)
		}
	}
}
