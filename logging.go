package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/core/logger"
)

// LogConfig selects level, format and destination for SetupLogging.
type LogConfig struct {
	// Level is "debug", "info" (the default for ""), "warn" (or
	// "warning"), "error" or "off"; case is ignored.
	Level string
	// File, when set, is the log file, created if missing and appended to;
	// its directory is created too. "" means Output.
	File string
	// Format is "text" (the default for "") or "json".
	Format string
	// Output is the destination when File is ""; nil means os.Stderr.
	Output io.Writer
}

// LogConfigFromEnv returns the LogConfig described by LOG_LEVEL, LOG_FILE
// and LOG_FORMAT. It does not validate the values: SetupLogging reports
// an unknown level or format.
func LogConfigFromEnv() LogConfig {
	return LogConfig{
		Level:  strings.TrimSpace(os.Getenv("LOG_LEVEL")),
		File:   strings.TrimSpace(os.Getenv("LOG_FILE")),
		Format: strings.TrimSpace(os.Getenv("LOG_FORMAT")),
	}
}

// errLogConfig is wrapped by SetupLogging's error for an unknown level or
// format.
var errLogConfig = errors.New("invalid log configuration")

// parseLogLevel returns the slog level for s, and off for "off".
func parseLogLevel(s string) (level slog.Level, off bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "info":
		return slog.LevelInfo, false, nil
	case "debug":
		return slog.LevelDebug, false, nil
	case "warn", "warning":
		return slog.LevelWarn, false, nil
	case "error":
		return slog.LevelError, false, nil
	case "off", "none", "silent":
		return slog.LevelError + 100, true, nil
	}
	return 0, false, fmt.Errorf("%w: LOG_LEVEL %q (want debug, info, warn, error or off)", errLogConfig, s)
}

// SetupLogging configures process-wide logging and is the only function in
// this package that does; call it first thing in main, before genkit.Init.
// It sets Genkit's level (core/logger.SetLevel) and installs a text or
// JSON slog handler writing to cfg.File or cfg.Output as the default
// logger, which is the logger Genkit's core/logger.FromContext hands to
// Genkit's own code, so Genkit's records follow the same level and
// destination. Output of the standard log package (log.Printf, log.Fatal)
// is routed through the same handler as records at error level, so it
// reaches the log file and survives level "error"; only "off" silences it,
// along with everything else.
//
// The returned Closer restores the previous default logger and log
// package output, then closes the log file; call it at exit (it is safe to
// call more than once). An unknown level or format gives an error naming
// the variable and the values allowed, an unopenable file a wrapped os error; logging is then
// left unchanged.
func SetupLogging(cfg LogConfig) (io.Closer, error) {
	level, off, err := parseLogLevel(cfg.Level)
	if err != nil {
		return nil, err
	}
	format := strings.ToLower(strings.TrimSpace(cfg.Format))
	if format != "" && format != "text" && format != "json" {
		return nil, fmt.Errorf("%w: LOG_FORMAT %q (want text or json)", errLogConfig, cfg.Format)
	}
	closer := &logCloser{
		prevSlog:    slog.Default(),
		prevOut:     log.Writer(),
		prevFlags:   log.Flags(),
		prevPrefix:  log.Prefix(),
		prevGenkitL: logger.GetLevel(),
	}
	var handler slog.Handler
	var stdOut io.Writer = io.Discard
	if off {
		handler = slog.DiscardHandler
	} else {
		w := cfg.Output
		if w == nil {
			w = os.Stderr
		}
		if cfg.File != "" {
			if dir := filepath.Dir(cfg.File); dir != "." {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, fmt.Errorf("create log directory: %w", err)
				}
			}
			f, err := os.OpenFile(cfg.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return nil, fmt.Errorf("open log file: %w", err)
			}
			closer.file = f
			w = f
		}
		opts := &slog.HandlerOptions{Level: level}
		if format == "json" {
			handler = slog.NewJSONHandler(w, opts)
		} else {
			handler = slog.NewTextHandler(w, opts)
		}
		stdOut = &stdLogWriter{handler: handler}
	}
	// logger.SetLevel installs its own stderr handler as the default; ours
	// replaces it right after.
	logger.SetLevel(level)
	slog.SetDefault(slog.New(handler))
	// slog.SetDefault routes the log package at info level; route it at
	// error level instead.
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(stdOut)
	return closer, nil
}

// stdLogWriter turns each write of the standard log package into an
// error-level record of handler.
type stdLogWriter struct {
	handler slog.Handler
}

func (w *stdLogWriter) Write(p []byte) (int, error) {
	ctx := context.Background()
	if !w.handler.Enabled(ctx, slog.LevelError) {
		return len(p), nil
	}
	msg := strings.TrimSuffix(string(p), "\n")
	r := slog.NewRecord(time.Now(), slog.LevelError, msg, 0)
	if err := w.handler.Handle(ctx, r); err != nil {
		return 0, err
	}
	return len(p), nil
}

// logCloser undoes SetupLogging and closes the log file.
type logCloser struct {
	once        sync.Once
	err         error
	file        *os.File
	prevSlog    *slog.Logger
	prevOut     io.Writer
	prevFlags   int
	prevPrefix  string
	prevGenkitL slog.Level
}

// Close restores the previous logging setup and closes the log file.
func (c *logCloser) Close() error {
	c.once.Do(func() {
		logger.SetLevel(c.prevGenkitL)
		slog.SetDefault(c.prevSlog)
		log.SetOutput(c.prevOut)
		log.SetFlags(c.prevFlags)
		log.SetPrefix(c.prevPrefix)
		if c.file != nil {
			if err := c.file.Close(); err != nil {
				c.err = fmt.Errorf("close log file: %w", err)
			}
		}
	})
	return c.err
}
