// Command hello imports obroute's driver and does nothing else: the import's footprint
// (packages, binary size) is measured on it.
package main

import (
	"fmt"

	_ "github.com/obroute/obroute/driver"
)

func main() { fmt.Println("hello") }
