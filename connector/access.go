package connector

import (
	"database/sql"
	"database/sql/driver"
)

// Reaching the Connector from database/sql
//
// A handle opened with sql.Open("obroute", dsn) hides its Connector; FromDB and FromConn give it
// back, for Stats, Explain, RefreshMetadata and the rest:
//
//	db, _ := sql.Open("obroute", dsn)
//	c, err := connector.FromDB(db)
//	fmt.Println(c.Stats().Routes)

// FromDB returns the Connector behind db, a handle opened with sql.Open("obroute", …) or
// sql.OpenDB(c). It takes no connection from the pool and does no I/O.
func FromDB(db *sql.DB) (*Connector, error) {
	if d, ok := db.Driver().(boundDriver); ok {
		return d.c, nil
	}
	return nil, errorf("%w (it is %T)", ErrNotObroute, db.Driver())
}

// FromConn returns the Connector behind conn, a connection of an obroute handle. It does no I/O.
func FromConn(conn *sql.Conn) (*Connector, error) {
	var c *Connector
	err := conn.Raw(func(dc any) error {
		cs, ok := dc.(*clientSession)
		if !ok {
			return errorf("%w (its connection is %T)", ErrNotObroute, dc)
		}
		c = cs.c
		return nil
	})
	return c, err
}

// Driver implements driver.Connector. The driver it returns carries the connector, which is how
// FromDB finds it.
func (c *Connector) Driver() driver.Driver {
	return boundDriver{Driver: Driver{}, c: c}
}

// boundDriver is the driver of one connector: obroute's Driver, plus the connector it was asked
// of.
type boundDriver struct {
	driver.Driver
	c *Connector
}
