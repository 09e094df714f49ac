package metacache_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/obroute/obroute/internal/metacache"
	"github.com/obroute/obroute/metadata"
)

func ExampleCache() {
	src := metadata.StaticSource{{
		Name: "orders_202503",
		Min:  time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		Max:  time.Date(2025, 3, 31, 23, 59, 59, 0, time.UTC),
		Hot:  true,
	}}
	c, err := metacache.New(src, metacache.Options{Interval: time.Minute, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	c.Start()
	defer c.Close()

	if err := c.Refresh(context.Background()); err != nil { // e.g. right after a migration
		panic(err)
	}
	for _, t := range c.Snapshot().Logical("orders") {
		fmt.Println(t.Name, t.Hot)
	}
	fmt.Println(c.Stats().Refreshes, c.LastError())
	// Output:
	// orders_202503 true
	// 2 <nil>
}
