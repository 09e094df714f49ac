package merge

import "testing"

// benchText pairs are equal under utf8mb4_general_ci, so the whole strings are read.

var sinkInt int
var benchText = []struct{ name, a, b string }{
	{"ASCII", "customer-00042 Alpha Beta", "CUSTOMER-00042 alpha beta  "},
	{"Latin", "Ångström Crème Brûlée Ærø", "ANGSTROM creme brulee ÆRØ"},
	{"Cyrillic", "Съешь же ещё этих мягких", "СЪЕШЬ ЖЕ ЕЩЁ ЭТИХ МЯГКИХ"},
}

func BenchmarkCompareText(b *testing.B) {
	for _, bt := range benchText {
		x, y := []byte(bt.a), []byte(bt.b)
		b.Run(bt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkInt += compareText(x, y)
			}
		})
	}
}

func BenchmarkAppendTextKey(b *testing.B) {
	for _, bt := range benchText {
		x := []byte(bt.a)
		b.Run(bt.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = appendKey(buf[:0], KindText, x)
			}
		})
	}
}
