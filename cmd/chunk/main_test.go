package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

func TestRunPrintsChunks(t *testing.T) {
	var out strings.Builder
	fixture := filepath.Join("..", "..", "testdata", "docx", "birds.docx")
	if err := run([]string{"-size", "200", "-overlap", "20", fixture}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"--- chunk 1/",
		"pages 1-2  Field guide to garden birds > Sightings\n",
		"Species: Robin | Count: 3 | Month: January",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if err := run([]string{"-paragraphs", fixture}, &out); err != nil || !strings.Contains(out.String(), "[H page 1] Field guide to garden birds > Identification\n    Identification\n") {
		t.Errorf("-paragraphs: %v\n%s", err, out.String())
	}
}

func TestRunErrors(t *testing.T) {
	var out strings.Builder
	if err := run(nil, &out); !errors.Is(err, errUsage) {
		t.Errorf("no file: %v", err)
	}
	if err := run([]string{"notes.txt"}, &out); err == nil {
		t.Error("a .txt file was accepted")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the guard let a request to a loopback server through: %s", r.URL)
	}))
	defer srv.Close()
	if err := run([]string{srv.URL}, &out); !errors.Is(err, askyourdocs.ErrPrivateTarget) {
		t.Errorf("loopback URL without -allow-private: %v", err)
	}
	if err := run([]string{filepath.Join(t.TempDir(), "missing.docx")}, &out); err == nil {
		t.Error("missing file accepted")
	}
}

func TestRunURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><body><main><h1>Opening hours</h1><p>The library opens at nine on weekdays.</p></main></body></html>`)
	}))
	defer srv.Close()
	var out strings.Builder
	if err := run([]string{"-allow-private", srv.URL + "/hours"}, &out); err != nil {
		t.Fatal(err)
	}
	want := "--- chunk 1/1  " + srv.URL + "/hours  Opening hours\nOpening hours\nThe library opens at nine on weekdays.\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("got\n%s\nwant prefix\n%s", out.String(), want)
	}
}

// TestRunURLContextEnds: the fetch runs with the command's context, so an
// ended context (Ctrl-C) fails it instead of the page being printed.
func TestRunURLContextEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><body><p>The library opens at nine.</p></body></html>`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	if err := runContext(ctx, []string{"-allow-private", srv.URL}, &out); !errors.Is(err, context.Canceled) {
		t.Fatalf("runContext with an ended context: %v, output %q", err, out.String())
	}
}
