// Command pingmysql opens a go-sql-driver/mysql handle on the DSN given as its argument and
// pings it: the footprint testdata/ping is compared with.
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/go-sql-driver/mysql"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pingmysql DSN")
		os.Exit(2)
	}
	db, err := sql.Open("mysql", os.Args[1])
	if err == nil {
		err = db.Ping()
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pingmysql:", err)
		os.Exit(1)
	}
	fmt.Println("pingmysql: ok")
}
