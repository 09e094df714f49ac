package embedded

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	vtlog "github.com/dolthub/vitess/go/vt/log"
	"github.com/sirupsen/logrus"
)

// logBridge forwards go-mysql-server's process-wide logging (logrus and the
// vitess log package) to the slog.Loggers of running Servers.
type logBridge struct {
	mu      sync.Mutex
	loggers map[*slog.Logger]int // logger -> number of servers using it
}

var (
	bridge     = &logBridge{loggers: make(map[*slog.Logger]int)}
	bridgeOnce sync.Once
)

// installBridge takes over logrus's standard logger and vitess's log
// functions. It runs once, before the first server's goroutines start.
func installBridge() {
	bridgeOnce.Do(func() {
		std := logrus.StandardLogger()
		std.SetOutput(io.Discard)
		std.SetLevel(logrus.PanicLevel)
		std.AddHook(bridge)
		vtlog.Info = func(v ...any) { bridge.emit(slog.LevelInfo, fmt.Sprint(v...), nil) }
		vtlog.Infof = func(f string, v ...any) { bridge.emit(slog.LevelInfo, fmt.Sprintf(f, v...), nil) }
		vtlog.Warning = func(v ...any) { bridge.emit(slog.LevelWarn, fmt.Sprint(v...), nil) }
		vtlog.Warningf = func(f string, v ...any) { bridge.emit(slog.LevelWarn, fmt.Sprintf(f, v...), nil) }
		vtlog.Error = func(v ...any) { bridge.emit(slog.LevelError, fmt.Sprint(v...), nil) }
		vtlog.Errorf = func(f string, v ...any) { bridge.emit(slog.LevelError, fmt.Sprintf(f, v...), nil) }
	})
}

func registerLogger(l *slog.Logger) {
	installBridge()
	if l == nil {
		return
	}
	bridge.mu.Lock()
	defer bridge.mu.Unlock()
	bridge.loggers[l]++
	bridge.adjustLevelLocked()
}

func unregisterLogger(l *slog.Logger) {
	if l == nil {
		return
	}
	bridge.mu.Lock()
	defer bridge.mu.Unlock()
	if bridge.loggers[l]--; bridge.loggers[l] <= 0 {
		delete(bridge.loggers, l)
	}
	bridge.adjustLevelLocked()
}

// adjustLevelLocked lets logrus format only what some logger will keep.
func (b *logBridge) adjustLevelLocked() {
	level := logrus.PanicLevel
	for l := range b.loggers {
		switch {
		case l.Enabled(context.Background(), slog.LevelDebug):
			level = max(level, logrus.DebugLevel)
		case l.Enabled(context.Background(), slog.LevelInfo):
			level = max(level, logrus.InfoLevel)
		case l.Enabled(context.Background(), slog.LevelWarn):
			level = max(level, logrus.WarnLevel)
		default:
			level = max(level, logrus.ErrorLevel)
		}
	}
	logrus.StandardLogger().SetLevel(level)
}

// Levels implements logrus.Hook.
func (b *logBridge) Levels() []logrus.Level { return logrus.AllLevels }

// Fire implements logrus.Hook.
func (b *logBridge) Fire(e *logrus.Entry) error {
	var level slog.Level
	switch e.Level {
	case logrus.TraceLevel, logrus.DebugLevel:
		level = slog.LevelDebug
	case logrus.InfoLevel:
		level = slog.LevelInfo
	case logrus.WarnLevel:
		level = slog.LevelWarn
	default:
		level = slog.LevelError
	}
	attrs := make([]slog.Attr, 0, len(e.Data))
	for k, v := range e.Data {
		attrs = append(attrs, slog.Any(k, v))
	}
	b.emit(level, e.Message, attrs)
	return nil
}

func (b *logBridge) emit(level slog.Level, msg string, attrs []slog.Attr) {
	b.mu.Lock()
	loggers := make([]*slog.Logger, 0, len(b.loggers))
	for l := range b.loggers {
		loggers = append(loggers, l)
	}
	b.mu.Unlock()
	attrs = append(attrs, slog.String("component", "go-mysql-server"))
	for _, l := range loggers {
		l.LogAttrs(context.Background(), level, msg, attrs...)
	}
}
