// Command grpcuser is a gRPC service's main package that adds obroute's driver, as a new user
// does: TestImportNextToCurrentGRPC builds it in a module of its own that requires the
// newest google.golang.org/grpc (its go.mod is written by the test).
package main

import (
	"database/sql"
	"fmt"

	_ "github.com/obroute/obroute/driver"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func main() {
	fmt.Println(status.New(codes.Unavailable, "no backend").Code(), sql.Drivers())
}
