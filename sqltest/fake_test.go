package sqltest_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// fakeTB records how a helper ended a test without ending the real one.
type fakeTB struct {
	testing.TB // the real test, for TempDir and anything not overridden

	mu       sync.Mutex
	cleanups []func()
	result
}

type result struct {
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fakeTB) Skip(args ...any) {
	f.skipped, f.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fakeTB) Skipf(format string, args ...any) { f.Skip(fmt.Sprintf(format, args...)) }

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
}

// runFake runs fn with a fakeTB in its own goroutine, then its cleanups.
func runFake(t *testing.T, fn func(testing.TB)) result {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	return f.result
}
