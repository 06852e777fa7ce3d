package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/core/logger"
)

// loggingEmitAll writes one record per level through slog, one through
// Genkit's logger and one through the standard log package.
func loggingEmitAll() {
	slog.Debug("msg-debug")
	slog.Info("msg-info", "k", "v")
	slog.Warn("msg-warn")
	slog.Error("msg-error")
	logger.FromContext(context.Background()).Info("msg-genkit-info")
	log.Printf("msg-stdlog %d", 42)
}

func TestSetupLoggingLevelsAndFormats(t *testing.T) {
	all := []string{"msg-debug", "msg-info", "msg-warn", "msg-error", "msg-genkit-info", "msg-stdlog 42"}
	for _, format := range []string{"text", "json"} {
		for _, tc := range []struct {
			level string
			want  []string
			genk  slog.Level
		}{
			{"debug", all, slog.LevelDebug},
			{"", all[1:], slog.LevelInfo},
			{"INFO", all[1:], slog.LevelInfo},
			{"warn", []string{"msg-warn", "msg-error", "msg-stdlog 42"}, slog.LevelWarn},
			{"error", []string{"msg-error", "msg-stdlog 42"}, slog.LevelError},
		} {
			t.Run(format+"/"+tc.level, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "logs", "app.log")
				closer, err := SetupLogging(LogConfig{Level: tc.level, File: path, Format: format})
				if err != nil {
					t.Fatal(err)
				}
				if got := logger.GetLevel(); got != tc.genk {
					t.Errorf("Genkit level = %v, want %v", got, tc.genk)
				}
				loggingEmitAll()
				if err := closer.Close(); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				out := string(data)
				for _, m := range all {
					if got, want := strings.Contains(out, m), slices.Contains(tc.want, m); got != want {
						t.Errorf("%q logged = %v, want %v\n%s", m, got, want, out)
					}
				}
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if len(lines) != len(tc.want) {
					t.Errorf("%d lines, want %d:\n%s", len(lines), len(tc.want), out)
				}
				for _, line := range lines {
					if format == "json" {
						var rec map[string]any
						if err := json.Unmarshal([]byte(line), &rec); err != nil {
							t.Errorf("not JSON: %q", line)
							continue
						}
						if strings.HasPrefix(rec["msg"].(string), "msg-stdlog") && rec["level"] != "ERROR" {
							t.Errorf("log.Printf record at %v, want ERROR", rec["level"])
						}
					} else {
						if !strings.Contains(line, "level=") || !strings.Contains(line, "msg=") {
							t.Errorf("not slog text: %q", line)
						}
						if strings.Contains(line, "msg-stdlog") && !strings.Contains(line, "level=ERROR") {
							t.Errorf("log.Printf line not at ERROR: %q", line)
						}
					}
				}
			})
		}
	}
}

func TestSetupLoggingOffSilencesEverything(t *testing.T) {
	var buf bytes.Buffer
	closer, err := SetupLogging(LogConfig{Level: "off", Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	loggingEmitAll()
	closer.Close()
	if buf.Len() != 0 {
		t.Errorf("off wrote %q", buf.String())
	}
}

func TestSetupLoggingOutputAndRestore(t *testing.T) {
	prev := slog.Default()
	prevOut := log.Writer()
	var buf bytes.Buffer
	closer, err := SetupLogging(LogConfig{Level: "info", Output: &buf, Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	slog.Info("to-buffer")
	if !strings.Contains(buf.String(), `"msg":"to-buffer"`) {
		t.Errorf("buffer = %q", buf.String())
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := closer.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if slog.Default() != prev || log.Writer() != prevOut {
		t.Error("Close did not restore the previous logging setup")
	}
	slog.Info("after-close")
	if strings.Contains(buf.String(), "after-close") {
		t.Error("logging continued into the old destination after Close")
	}
}

func TestSetupLoggingErrors(t *testing.T) {
	for _, cfg := range []LogConfig{{Level: "loud"}, {Format: "xml"}} {
		if _, err := SetupLogging(cfg); !errors.Is(err, errLogConfig) {
			t.Errorf("%+v: err = %v, want errLogConfig", cfg, err)
		}
	}
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	if _, err := SetupLogging(LogConfig{File: filepath.Join(blocker, "sub", "x.log")}); err == nil {
		t.Error("unopenable log file accepted")
	}
}

func TestLogConfigFromEnv(t *testing.T) {
	t.Setenv("LOG_LEVEL", "debug")
	t.Setenv("LOG_FILE", "/tmp/x.log")
	t.Setenv("LOG_FORMAT", "json")
	if got := LogConfigFromEnv(); got != (LogConfig{Level: "debug", File: "/tmp/x.log", Format: "json"}) {
		t.Errorf("got %+v", got)
	}
}
