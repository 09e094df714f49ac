package bench

import "testing"

// TestMedianConfidenceInterval checks the ranks bounding a median with 95 % confidence against
// the published table of distribution-free intervals (e.g. Conover, Practical Nonparametric
// Statistics, table A3: n = 11 → 2nd and 10th, n = 20 → 6th and 15th, n = 31 → 10th and 22nd).
func TestMedianConfidenceInterval(t *testing.T) {
	for n, want := range map[int]int{3: 1, 5: 1, 6: 1, 8: 1, 9: 2, 11: 2, 20: 6, 21: 6, 31: 10, 50: 18} {
		if got := medianCIRank(n); got != want {
			t.Errorf("n = %d: rank %d, want %d", n, got, want)
		}
	}
	xs := make([]float64, 21)
	for i := range xs {
		xs[i] = float64(21 - i) // 21, 20, …, 1: spreadOf sorts
	}
	want := Spread{Median: 11, Lo: 6, Hi: 16, Min: 1, Max: 21}
	if got := spreadOf(xs); got != want {
		t.Errorf("spreadOf(1…21) = %+v, want %+v", got, want)
	}
}
