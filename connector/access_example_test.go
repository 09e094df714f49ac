package connector_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/obroute/obroute/connector"
	_ "github.com/obroute/obroute/driver"
)

// A handle opened with sql.Open("obroute", …) gives its Connector back with FromDB (or
// FromConn for a *sql.Conn): Explain, Stats and RefreshMetadata, with no connection taken from
// the pool. Nothing here talks to a server: obroute connects when a statement runs.
func ExampleFromDB() {
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn=app:pw@tcp(10.0.0.1:3306)/shop;"+
		"backends.cold.dsn=app:pw@tcp(10.0.0.2:3306)/shop;routes.audit_log=cold")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	c, err := connector.FromDB(db)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	plan, err := c.Explain(ctx, "SELECT note FROM audit_log WHERE id = ?", 42)
	if err != nil {
		panic(err)
	}
	fmt.Println("audit_log goes to", plan.Targets[0].Backend, plan.Rule)
	fmt.Println("metadata refreshed:", c.RefreshMetadata(ctx)) // no time-sharded table: nothing to do
	fmt.Println("backends:", len(c.Stats().Backends), "client sessions:", c.Stats().ClientSessions)

	if _, err := connector.FromDB(sql.OpenDB(otherConnector{})); err != nil {
		fmt.Println(err)
	}
	// Output:
	// audit_log goes to cold USE_ROUTE_POLICY
	// metadata refreshed: <nil>
	// backends: 2 client sessions: 0
	// obroute: the handle's driver is not obroute (it is connector_test.otherDriver)
}

// otherConnector stands for any other driver's connector.
type otherConnector struct{}

func (otherConnector) Connect(context.Context) (driver.Conn, error) { return nil, driver.ErrBadConn }
func (otherConnector) Driver() driver.Driver                        { return otherDriver{} }

type otherDriver struct{}

func (otherDriver) Open(string) (driver.Conn, error) { return nil, driver.ErrBadConn }
