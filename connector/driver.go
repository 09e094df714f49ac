package connector

import (
	"database/sql/driver"

	"github.com/obroute/obroute/config"
)

// Driver is obroute's database/sql driver; package driver registers it as "obroute". Its DSN
// is a plain go-sql-driver/mysql DSN (one backend, role hot) or an obroute DSN naming several
// backends (see package config).
type Driver struct{}

var (
	_ driver.Driver        = Driver{}
	_ driver.DriverContext = Driver{}
)

// OpenConnector implements driver.DriverContext: it parses and validates dsn, so a bad DSN
// fails at sql.Open. It does no network I/O.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// Open implements driver.Driver. database/sql uses OpenConnector instead; Open builds a
// connector for one connection, closed with it, for callers of the bare driver.Driver interface.
func (Driver) Open(dsn string) (driver.Conn, error) {
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return openOne(cfg)
}
