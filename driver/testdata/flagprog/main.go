// Command flagprog defines its own -v flag and imports obroute's driver, as an application
// does. It prints the flags of flag.CommandLine, the drivers of database/sql and the state of
// the standard loggers, for TestImportChangesNothing.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"

	_ "github.com/obroute/obroute/driver"
)

func main() {
	v := flag.Bool("v", false, "verbose")
	flag.Parse()
	var flags []string
	flag.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	fmt.Printf("flags=%s v=%t\n", strings.Join(flags, ","), *v)
	fmt.Printf("drivers=%s\n", strings.Join(sql.Drivers(), ","))
	fmt.Printf("log: flags=%d prefix=%q stderr=%t\n", log.Flags(), log.Prefix(), log.Writer() == os.Stderr)
	fmt.Printf("slog: %T\n", slog.Default().Handler())
}
