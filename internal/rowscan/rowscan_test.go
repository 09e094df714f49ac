package rowscan

import "testing"

func TestTargetsPointIntoVals(t *testing.T) {
	vals := make([]string, 3)
	ptrs := Targets(vals)
	if len(ptrs) != len(vals) {
		t.Fatalf("%d targets for %d values", len(ptrs), len(vals))
	}
	for i, p := range ptrs {
		*(p.(*string)) = string(rune('a' + i))
	}
	if got := vals[0] + vals[1] + vals[2]; got != "abc" {
		t.Fatalf("vals after writing through the targets: %q, want \"abc\"", got)
	}
}
