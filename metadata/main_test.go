package metadata

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them, such as
// a Cache refresher that Close did not stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
