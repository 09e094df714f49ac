package hint

import "context"

// contextKey is the one key under which a Set travels in a context.
type contextKey struct{}

// FromContext returns the hints carried by ctx, the zero Set if none. It is
// called for every statement: one ctx.Value lookup, no allocation.
func FromContext(ctx context.Context) Set {
	if ctx == nil {
		return Set{}
	}
	s, _ := ctx.Value(contextKey{}).(Set)
	return s
}

// WithSet returns a copy of ctx that carries exactly s, replacing every hint
// ctx carried; WithSet(ctx, Set{}) clears them.
func WithSet(ctx context.Context, s Set) context.Context {
	return context.WithValue(ctx, contextKey{}, s)
}

// WithShadow returns a copy of ctx whose statements are shadow traffic. The
// other hints of ctx are kept.
func WithShadow(ctx context.Context) context.Context {
	s := FromContext(ctx)
	s.Shadow = ShadowOn
	return WithSet(ctx, s)
}

// WithProduction returns a copy of ctx whose statements are explicitly
// production traffic: a shadow comment on such a statement is a conflict,
// not a switch to shadow. The other hints of ctx are kept.
func WithProduction(ctx context.Context) context.Context {
	s := FromContext(ctx)
	s.Shadow = ShadowOff
	return WithSet(ctx, s)
}

// WithColdQuery returns a copy of ctx whose statements may read the history
// store. The other hints of ctx are kept.
func WithColdQuery(ctx context.Context) context.Context {
	s := FromContext(ctx)
	s.ColdQuery = true
	return WithSet(ctx, s)
}

// WithLevel returns a copy of ctx whose statements are declared at query
// level l (LevelNone removes the declaration). The other hints are kept.
func WithLevel(ctx context.Context, l Level) context.Context {
	s := FromContext(ctx)
	s.Level = l
	return WithSet(ctx, s)
}

// WithBackend returns a copy of ctx whose statements are forced to the
// backend called name ("" removes the force). The other hints are kept. The
// name is checked by the router, which knows the configured backends.
func WithBackend(ctx context.Context, name string) context.Context {
	s := FromContext(ctx)
	s.Backend = name
	return WithSet(ctx, s)
}
