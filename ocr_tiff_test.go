package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// buildTIFF returns the header and directory chain of a TIFF whose pages
// have the given sizes (no image data: tiffPageSizes reads none), widths
// and heights of type typ (3 SHORT, 4 LONG, 16 LONG8), classic or BigTIFF.
func buildTIFF(bo binary.ByteOrder, big bool, typ uint16, pages ...tiffPage) []byte {
	var b bytes.Buffer
	if bo == binary.LittleEndian {
		b.WriteString("II")
	} else {
		b.WriteString("MM")
	}
	u16 := func(v uint16) { _ = binary.Write(&b, bo, v) }
	u32 := func(v uint32) { _ = binary.Write(&b, bo, v) }
	u64 := func(v uint64) { _ = binary.Write(&b, bo, v) }
	off := func(v uint64) {
		if big {
			u64(v)
		} else {
			u32(uint32(v))
		}
	}
	head, dirSize := uint64(8), uint64(2+3*12+4)
	if big {
		u16(43)
		u16(8)
		u16(0)
		head, dirSize = 16, 8+3*20+8
	} else {
		u16(42)
	}
	off(head)
	for i, p := range pages {
		if big {
			u64(3)
		} else {
			u16(3)
		}
		for _, e := range [][2]uint64{{256, p.width}, {257, p.height}, {259, 1}} {
			u16(uint16(e[0]))
			t := typ
			if e[0] == 259 {
				t = 3
			}
			u16(t)
			off(1)
			// The value, left-justified in the value field.
			field := make([]byte, 4)
			if big {
				field = make([]byte, 8)
			}
			switch t {
			case 3:
				bo.PutUint16(field, uint16(e[1]))
			case 4:
				bo.PutUint32(field, uint32(e[1]))
			case 16: // in a classic TIFF only the 4 bytes that fit
				if big {
					bo.PutUint64(field, e[1])
				} else {
					bo.PutUint32(field, uint32(e[1]))
				}
			}
			b.Write(field)
		}
		next := uint64(0)
		if i+1 < len(pages) {
			next = head + uint64(i+1)*dirSize
		}
		off(next)
	}
	return b.Bytes()
}

func TestTIFFPageSizes(t *testing.T) {
	fixture, err := os.ReadFile("testdata/ocr/scan.tiff")
	if err != nil {
		t.Fatal(err)
	}
	le, be := binary.LittleEndian, binary.BigEndian
	two := []tiffPage{{1654, 2339}, {800, 600}}
	loop := buildTIFF(le, false, 4, tiffPage{10, 10}, tiffPage{20, 20})
	le.PutUint32(loop[len(loop)-4:], 8) // the second page's next is the first
	truncated := buildTIFF(le, false, 4, two...)
	truncated = truncated[:len(truncated)-10]
	for _, c := range []struct {
		name  string
		data  []byte
		limit int
		want  []tiffPage // nil: an error wrapping errTIFF
	}{
		{"fixture (pdftoppm, LZW)", fixture, 10, []tiffPage{{1654, 2339}}},
		{"little-endian LONG", buildTIFF(le, false, 4, two...), 10, two},
		{"big-endian SHORT", buildTIFF(be, false, 3, two...), 10, two},
		{"BigTIFF LONG8", buildTIFF(le, true, 16, tiffPage{1 << 33, 5}), 10, []tiffPage{{1 << 33, 5}}},
		{"BigTIFF big-endian LONG", buildTIFF(be, true, 4, two...), 10, two},
		{"huge canvas", buildTIFF(le, false, 4, tiffPage{60000, 60000}), 10, []tiffPage{{60000, 60000}}},
		{"stops after limit+1 pages", buildTIFF(le, false, 4, two[0], two[0], two[0], two[0]), 2, []tiffPage{two[0], two[0], two[0]}},
		{"directory loop", loop, 10, nil},
		{"truncated directory", truncated, 10, nil},
		{"LONG8 outside BigTIFF", buildTIFF(le, false, 16, two[0]), 10, nil},
		{"zero width", buildTIFF(le, false, 4, tiffPage{0, 5}), 10, nil},
		{"not a TIFF", []byte("\x89PNG\r\n\x1a\n0000000000"), 10, nil},
		{"version 41", []byte("II\x29\x00\x08\x00\x00\x00"), 10, nil},
		{"no page", []byte("II\x2a\x00\x00\x00\x00\x00"), 10, nil},
		{"first directory outside the file", []byte("II\x2a\x00\xff\xff\xff\x7f"), 10, nil},
		{"short file", []byte("II*"), 10, nil},
	} {
		got, err := tiffPageSizes(bytes.NewReader(c.data), int64(len(c.data)), c.limit)
		if c.want == nil {
			if !errors.Is(err, errTIFF) {
				t.Errorf("%s: %v, %v; want an error wrapping errTIFF", c.name, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// TestOCRRefusesHostileTIFF: a TIFF declaring a huge page, or more pages
// than MaxPages, is refused before tesseract runs (its path here does not
// exist, so reaching it would give another error).
func TestOCRRefusesHostileTIFF(t *testing.T) {
	dir := t.TempDir()
	o := &OCR{Tesseract: filepath.Join(dir, "no-tesseract"), MaxPages: 2}
	page := tiffPage{1000, 1000}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"one 20000x20000 page", buildTIFF(binary.LittleEndian, false, 4, tiffPage{20000, 20000}), ErrDocumentTooLarge},
		{"a page 1 pixel high and 200M wide", buildTIFF(binary.BigEndian, true, 16, tiffPage{200_000_000, 1}), ErrDocumentTooLarge},
		{"3 pages over MaxPages 2", buildTIFF(binary.LittleEndian, false, 3, page, page, page), ErrDocumentTooLarge},
		{"a broken directory", []byte("II\x2a\x00\x08\x00\x00\x00\x00\x00"), ErrInvalidDocument},
	} {
		path := filepath.Join(dir, "scan.tif")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ExtractParagraphsWithOptions(context.Background(), path, &ExtractOptions{OCR: o})
		var de *DocumentError
		if !errors.Is(err, c.want) || !errors.As(err, &de) {
			t.Errorf("%s: %v, want a *DocumentError wrapping %v", c.name, err, c.want)
		}
	}
}

func FuzzTIFFPageSizes(f *testing.F) {
	if fixture, err := os.ReadFile("testdata/ocr/scan.tiff"); err == nil {
		f.Add(fixture)
	}
	f.Add(buildTIFF(binary.LittleEndian, false, 4, tiffPage{3, 4}, tiffPage{5, 6}))
	f.Add(buildTIFF(binary.BigEndian, false, 3, tiffPage{3, 4}))
	f.Add(buildTIFF(binary.LittleEndian, true, 16, tiffPage{1 << 40, 2}))
	f.Add([]byte("MM\x00\x2b\x00\x08\x00\x00\x00\x00\x00\x00\x00\x10"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 4
		pages, err := tiffPageSizes(bytes.NewReader(data), int64(len(data)), limit)
		if err != nil {
			if !errors.Is(err, errTIFF) {
				t.Fatalf("error not wrapping errTIFF: %v", err)
			}
			return
		}
		if len(pages) == 0 || len(pages) > limit+1 {
			t.Fatalf("%d pages, want 1 to %d", len(pages), limit+1)
		}
		for _, p := range pages {
			if p.width == 0 || p.height == 0 {
				t.Fatalf("page without a size: %v", p)
			}
		}
	})
}
