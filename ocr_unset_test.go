package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOCRUnsetImageReason checks that an image read with a nil
// ExtractOptions.OCR is refused saying OCR must be set (not that it is
// "not available", which is NewOCR's failure), while the error still
// wraps ErrUnsupportedFormat and ErrOCRUnavailable.
func TestOCRUnsetImageReason(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".png", ".jpg", ".tiff"} {
		path := filepath.Join(dir, "scan"+ext)
		if err := os.WriteFile(path, []byte("not decoded: refused before reading"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ExtractParagraphsWithOptions(context.Background(), path, &ExtractOptions{})
		var de *DocumentError
		if !errors.As(err, &de) {
			t.Fatalf("%s: err = %v (%T), want a *DocumentError", ext, err, err)
		}
		if !errors.Is(err, ErrUnsupportedFormat) || !errors.Is(err, ErrOCRUnavailable) {
			t.Errorf("%s: %v, want it to wrap ErrUnsupportedFormat and ErrOCRUnavailable", ext, err)
		}
		for _, s := range []string{de.Reason, err.Error()} {
			if strings.Contains(s, "not available") {
				t.Errorf("%s: %q says OCR is not available; it is only not set", ext, s)
			}
			for _, want := range []string{"ExtractOptions.OCR", "NewOCR", ext} {
				if !strings.Contains(s, want) {
					t.Errorf("%s: %q lacks %q", ext, s, want)
				}
			}
		}
	}
}
