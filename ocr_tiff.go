package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// TIFF pages are sized before tesseract decodes them: a TIFF of a few
// hundred kilobytes can declare a 20000 x 20000 page of one deflated
// colour, which tesseract decodes into gigabytes, and a TIFF can chain
// thousands of pages that tesseract would read before the page limit is
// seen. tiffPageSizes walks the file's directory chain (classic TIFF and
// BigTIFF, either byte order) and reads only each page's ImageWidth and
// ImageLength; Go's standard library has no TIFF decoder.

// tiffPage is the size of one page of a TIFF, in pixels.
type tiffPage struct{ width, height uint64 }

// errTIFF is wrapped by tiffPageSizes' errors for a file that is not a
// well-formed TIFF.
var errTIFF = errors.New("not a well-formed TIFF")

// tiffMaxEntries bounds the entries of one directory (a page has a few
// dozen; libtiff itself refuses more than 4096 in some paths).
const tiffMaxEntries = 4096

// tiffPageSizes returns the sizes of the pages in the main directory chain
// of the TIFF r holds (size bytes), in order, reading at most limit+1 of
// them: a result longer than limit means the file has more pages than
// that. Errors wrap errTIFF: a bad header, a directory outside the file or
// visited twice, a page without a width or height.
func tiffPageSizes(r io.ReaderAt, size int64, limit int) ([]tiffPage, error) {
	var head [16]byte
	if size < 8 {
		return nil, fmt.Errorf("%w: %d bytes", errTIFF, size)
	}
	if _, err := r.ReadAt(head[:8], 0); err != nil {
		return nil, fmt.Errorf("%w: header: %w", errTIFF, err)
	}
	var bo binary.ByteOrder
	switch string(head[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("%w: byte order mark %q", errTIFF, head[:2])
	}
	t := tiffReader{r: r, size: size, bo: bo}
	var next uint64
	switch bo.Uint16(head[2:4]) {
	case 42:
		next = uint64(bo.Uint32(head[4:8]))
	case 43: // BigTIFF: offset size 8, then a reserved 0, then the offset
		if _, err := r.ReadAt(head[:16], 0); err != nil || bo.Uint16(head[4:6]) != 8 {
			return nil, fmt.Errorf("%w: BigTIFF header", errTIFF)
		}
		t.big = true
		next = bo.Uint64(head[8:16])
	default:
		return nil, fmt.Errorf("%w: version %d", errTIFF, bo.Uint16(head[2:4]))
	}
	if next == 0 {
		return nil, fmt.Errorf("%w: no page", errTIFF)
	}
	seen := map[uint64]bool{}
	var pages []tiffPage
	for next != 0 && len(pages) <= limit {
		if seen[next] {
			return nil, fmt.Errorf("%w: directory at offset %d loops", errTIFF, next)
		}
		seen[next] = true
		p, n, err := t.directory(next)
		if err != nil {
			return nil, fmt.Errorf("%w: page %d: %w", errTIFF, len(pages)+1, err)
		}
		pages = append(pages, p)
		next = n
	}
	return pages, nil
}

// tiffReader reads the directories of one TIFF.
type tiffReader struct {
	r    io.ReaderAt
	size int64
	bo   binary.ByteOrder
	big  bool
}

// directory reads the directory at off: the page's size and the offset of
// the next directory (0 for none).
func (t tiffReader) directory(off uint64) (tiffPage, uint64, error) {
	countSize, entrySize, offSize := uint64(2), uint64(12), uint64(4)
	if t.big {
		countSize, entrySize, offSize = 8, 20, 8
	}
	buf, err := t.read(off, countSize)
	if err != nil {
		return tiffPage{}, 0, err
	}
	var count uint64
	if t.big {
		count = t.bo.Uint64(buf)
	} else {
		count = uint64(t.bo.Uint16(buf))
	}
	if count == 0 || count > tiffMaxEntries {
		return tiffPage{}, 0, fmt.Errorf("directory at offset %d has %d entries", off, count)
	}
	body, err := t.read(off+countSize, count*entrySize+offSize)
	if err != nil {
		return tiffPage{}, 0, err
	}
	var p tiffPage
	for i := range count {
		e := body[i*entrySize : (i+1)*entrySize]
		tag, typ := t.bo.Uint16(e[0:2]), t.bo.Uint16(e[2:4])
		if tag != 256 && tag != 257 { // ImageWidth, ImageLength
			continue
		}
		val := e[8:] // the value field, after tag, type and count
		if t.big {
			val = e[12:]
		}
		var v uint64
		switch typ {
		case 3: // SHORT
			v = uint64(t.bo.Uint16(val))
		case 4: // LONG
			v = uint64(t.bo.Uint32(val))
		case 16: // LONG8 (BigTIFF)
			if !t.big {
				return tiffPage{}, 0, fmt.Errorf("tag %d of type LONG8 outside BigTIFF", tag)
			}
			v = t.bo.Uint64(val)
		default:
			return tiffPage{}, 0, fmt.Errorf("tag %d of type %d", tag, typ)
		}
		if tag == 256 {
			p.width = v
		} else {
			p.height = v
		}
	}
	if p.width == 0 || p.height == 0 {
		return tiffPage{}, 0, fmt.Errorf("directory at offset %d gives no width or height", off)
	}
	tail := body[count*entrySize:]
	if t.big {
		return p, t.bo.Uint64(tail), nil
	}
	return p, uint64(t.bo.Uint32(tail)), nil
}

// read returns n bytes at off, or an error when they are not all inside
// the file.
func (t tiffReader) read(off, n uint64) ([]byte, error) {
	if off > uint64(t.size) || n > uint64(t.size)-off {
		return nil, fmt.Errorf("offset %d+%d outside the file of %d bytes", off, n, t.size)
	}
	buf := make([]byte, n)
	if _, err := t.r.ReadAt(buf, int64(off)); err != nil {
		return nil, err
	}
	return buf, nil
}
