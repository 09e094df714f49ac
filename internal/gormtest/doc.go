// Package gormtest tests GORM's Migrator through obroute on time-sharded logical tables. It is a
// module of its own, so that GORM stays out of obroute's go.mod: scripts/test.sh runs its tests.
package gormtest
