// Package driver registers obroute with database/sql under the name "obroute".
//
//	import _ "github.com/obroute/obroute/driver"
//
//	db, err := sql.Open("obroute", dsn)
//
// The DSN is either a plain go-sql-driver/mysql DSN (one backend, role hot: a drop-in for
// "mysql") or an obroute DSN naming several backends (see package config). Everything else is
// package connector's.
package driver

import (
	"database/sql"
	"database/sql/driver"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
)

// Name is the driver name obroute registers with database/sql.
const Name = "obroute"

// Driver is obroute's database/sql driver.
type Driver struct{}

var (
	_ driver.Driver        = Driver{}
	_ driver.DriverContext = Driver{}
)

func init() { sql.Register(Name, Driver{}) }

// OpenConnector implements driver.DriverContext: it parses and validates dsn, so a bad DSN
// fails at sql.Open.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return connector.New(cfg, connector.WithDriver(d))
}

// Open implements driver.Driver. database/sql uses OpenConnector instead; Open builds a
// connector for one connection, closed with it, for callers of the bare driver.Driver interface.
func (d Driver) Open(dsn string) (driver.Conn, error) {
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return connector.Open(cfg, connector.WithDriver(d))
}
