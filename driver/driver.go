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

	"github.com/obroute/obroute/connector"
)

// Name is the driver name obroute registers with database/sql.
const Name = "obroute"

// Driver is obroute's database/sql driver (connector.Driver).
type Driver = connector.Driver

func init() { sql.Register(Name, Driver{}) }
