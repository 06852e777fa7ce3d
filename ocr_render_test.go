package engine

import (
	"errors"
	"math"
	"testing"
)

func TestOCRRenderDPI(t *testing.T) {
	for _, c := range []struct {
		name string
		dpi  int
		w, h float64
		want int // 0: ErrDocumentTooLarge
	}{
		{"A4 keeps 300 dpi", 300, 595, 842, 300},
		{"a 40000-point strip is lowered", 300, 40000, 792, 126},
		{"a poster at the floor", 300, 21000, 21000, 36},
		{"too large even at 36 dpi", 300, 4e6, 792, 0},
		{"an infinite box", 300, math.Inf(1), 792, 0},
		{"NaN", 300, math.NaN(), 792, 0},
	} {
		got, err := ocrRenderDPI(c.dpi, c.w, c.h)
		if c.want == 0 {
			if !errors.Is(err, ErrDocumentTooLarge) {
				t.Errorf("%s: %d, %v; want ErrDocumentTooLarge", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
		if px := c.w * c.h * float64(got*got) / (72 * 72); px > ocrMaxPixels {
			t.Errorf("%s: %d dpi renders %.0f pixels, over %d", c.name, got, px, ocrMaxPixels)
		}
	}
}
