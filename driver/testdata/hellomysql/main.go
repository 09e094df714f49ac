// Command hellomysql imports go-sql-driver/mysql and does nothing else: the footprint obroute's
// driver is compared with.
package main

import (
	"fmt"

	_ "github.com/go-sql-driver/mysql"
)

func main() { fmt.Println("hello") }
