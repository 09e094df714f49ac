package connector

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
)

// backend is one configured backend: a go-sql-driver connector and what obroute knows of it.
type backend struct {
	name    string
	role    string
	addr    string
	mysql   *mysql.Config
	connect driver.Connector
}

func newBackend(b config.Backend) (*backend, error) {
	c, err := mysql.NewConnector(b.MySQL)
	if err != nil {
		return nil, fmt.Errorf("obroute: backend %q: %w", b.Name, err)
	}
	return &backend{name: b.Name, role: b.Role, addr: b.Address(), mysql: b.MySQL, connect: c}, nil
}

// open opens a server session to the backend.
func (b *backend) open(ctx context.Context) (*serverSession, error) {
	conn, err := b.connect.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newServerSession(b, conn), nil
}
