package routing

import "fmt"

// errorf is fmt.Errorf, not inlined: errors are built at many places, and an inlined
// fmt.Errorf at each of them would grow every binary that imports the driver (see
// driver/import_test.go).
//
//go:noinline
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
