// Command ping opens an obroute handle on the DSN given as its argument and pings it, as the
// smallest program that uses the driver does: the footprint of using the driver (the parser
// included) is measured on it.
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/obroute/obroute/driver"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ping DSN")
		os.Exit(2)
	}
	db, err := sql.Open("obroute", os.Args[1])
	if err == nil {
		err = db.Ping()
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ping:", err)
		os.Exit(1)
	}
	fmt.Println("ping: ok")
}
