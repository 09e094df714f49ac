package hint

import (
	"context"
	"errors"
	"testing"
)

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Level
		ok   bool
	}{
		{"L1", L1, true}, {"l2", L2, true}, {"3", L3, true}, {"L3", L3, true},
		{"", LevelNone, false}, {"L0", LevelNone, false}, {"L4", LevelNone, false},
		{"LL1", LevelNone, false}, {" L1", LevelNone, false}, {"level1", LevelNone, false},
	} {
		got, err := ParseLevel(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrMalformedHint) {
			t.Errorf("ParseLevel(%q) error %v does not wrap ErrMalformedHint", tc.in, err)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{LevelNone.String(), "none"}, {L1.String(), "L1"}, {L2.String(), "L2"}, {L3.String(), "L3"},
		{Level(9).String(), "Level(9)"},
		{ShadowUnset.String(), "unset"}, {ShadowOn.String(), "shadow"}, {ShadowOff.String(), "production"},
		{Shadow(7).String(), "Shadow(7)"},
		{Set{}.String(), "none"},
		{Set{Shadow: ShadowOff}.String(), "shadow=false"},
		{Set{Shadow: ShadowOn, ColdQuery: true, Level: L2, Backend: "cold"}.String(),
			"shadow=true, cold_query=true, query_level=L2, backend=cold"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestSetStringParsesBack(t *testing.T) {
	s := Set{Shadow: ShadowOff, ColdQuery: true, Level: L3, Backend: "hist-1"}
	got, _, err := ParseLeading("/*+ OBROUTE(" + s.String() + ") */ SELECT 1")
	if err != nil || got != s {
		t.Errorf("round trip of %v = %v, %v", s, got, err)
	}
}

func TestIsZero(t *testing.T) {
	if !(Set{}).IsZero() {
		t.Error("zero Set is not IsZero")
	}
	for _, s := range []Set{{Shadow: ShadowOff}, {ColdQuery: true}, {Level: L1}, {Backend: "b"}} {
		if s.IsZero() {
			t.Errorf("%+v reports IsZero", s)
		}
	}
}

func TestCombine(t *testing.T) {
	for _, tc := range []struct {
		name             string
		context, comment Set
		want             Set
		conflict         bool
	}{
		{name: "both empty"},
		{name: "context only", context: Set{Shadow: ShadowOn, Level: L1}, want: Set{Shadow: ShadowOn, Level: L1}},
		{name: "comment only", comment: Set{Shadow: ShadowOff, Backend: "b"}, want: Set{Shadow: ShadowOff, Backend: "b"}},
		{name: "fields from both sides", context: Set{Shadow: ShadowOn}, comment: Set{Level: L2, ColdQuery: true},
			want: Set{Shadow: ShadowOn, Level: L2, ColdQuery: true}},
		{name: "same values", context: Set{Shadow: ShadowOn, Level: L3, Backend: "x"}, comment: Set{Shadow: ShadowOn, Level: L3, Backend: "x"},
			want: Set{Shadow: ShadowOn, Level: L3, Backend: "x"}},
		{name: "cold query granted by context", context: Set{ColdQuery: true}, want: Set{ColdQuery: true}},
		{name: "shadow context, production comment", context: Set{Shadow: ShadowOn}, comment: Set{Shadow: ShadowOff}, conflict: true},
		{name: "production context, shadow comment", context: Set{Shadow: ShadowOff}, comment: Set{Shadow: ShadowOn}, conflict: true},
		{name: "levels differ", context: Set{Level: L1}, comment: Set{Level: L3}, conflict: true},
		{name: "backends differ", context: Set{Backend: "a"}, comment: Set{Backend: "b"}, conflict: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Combine(tc.context, tc.comment)
			if tc.conflict {
				if !errors.Is(err, ErrHintConflict) {
					t.Fatalf("Combine error = %v, want ErrHintConflict", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Combine = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestCombineConflictMessage(t *testing.T) {
	_, err := Combine(Set{Shadow: ShadowOn}, Set{Shadow: ShadowOff})
	want := `hint: conflicting hints "shadow": the context says shadow=true but a statement comment says shadow=false; ` +
		`a comment cannot override the context: remove the comment or change the context hint`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestContextSetters(t *testing.T) {
	bg := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want Set
	}{
		{"background", bg, Set{}},
		{"shadow", WithShadow(bg), Set{Shadow: ShadowOn}},
		{"production", WithProduction(bg), Set{Shadow: ShadowOff}},
		{"cold query", WithColdQuery(bg), Set{ColdQuery: true}},
		{"level", WithLevel(bg, L2), Set{Level: L2}},
		{"backend", WithBackend(bg, "hist"), Set{Backend: "hist"}},
		{"setters compose", WithBackend(WithColdQuery(WithLevel(WithShadow(bg), L1)), "hot"),
			Set{Shadow: ShadowOn, Level: L1, ColdQuery: true, Backend: "hot"}},
		{"innermost setter wins", WithProduction(WithShadow(bg)), Set{Shadow: ShadowOff}},
		{"level removed", WithLevel(WithLevel(bg, L3), LevelNone), Set{}},
		{"WithSet replaces", WithSet(WithShadow(WithLevel(bg, L1)), Set{Backend: "b"}), Set{Backend: "b"}},
		{"WithSet zero clears", WithSet(WithShadow(bg), Set{}), Set{}},
		{"unrelated values kept apart", context.WithValue(WithShadow(bg), struct{ k int }{1}, "v"), Set{Shadow: ShadowOn}},
		{"cancellation keeps hints", func() context.Context {
			ctx, cancel := context.WithCancel(WithLevel(bg, L3))
			cancel()
			return ctx
		}(), Set{Level: L3}},
	} {
		if got := FromContext(tc.ctx); got != tc.want {
			t.Errorf("%s: FromContext = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	var none context.Context
	if got := FromContext(none); !got.IsZero() {
		t.Errorf("FromContext(nil) = %+v, want zero", got)
	}
}

func TestFromContextAllocations(t *testing.T) {
	deep := context.Background()
	for i := range 5 {
		deep = context.WithValue(deep, struct{ i int }{i}, i)
	}
	for name, ctx := range map[string]context.Context{
		"no hint":           context.Background(),
		"no hint, deep":     deep,
		"with hint":         WithLevel(WithShadow(deep), L2),
		"with backend hint": WithBackend(deep, "cold-replica"),
	} {
		if n := testing.AllocsPerRun(100, func() { _ = FromContext(ctx) }); n != 0 {
			t.Errorf("%s: FromContext allocates %v times, want 0", name, n)
		}
	}
}

func BenchmarkFromContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{
		{"no hint", ctx},
		{"hint", WithLevel(WithShadow(ctx), L2)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = FromContext(bc.ctx)
			}
		})
	}
}
