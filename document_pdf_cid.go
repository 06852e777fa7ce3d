package engine

import (
	"compress/gzip"
	"embed"
	"io"
	"strings"
	"sync"
	"unicode/utf16"
)

// pdfCollectionCMaps holds Adobe's CID-to-Unicode CMaps of the four CJK
// character collections (Adobe-CNS1, -GB1, -Japan1, -Korea1; gzipped, from
// Debian's poppler-data; BSD-3-Clause, notice in each file and in
// pdfcmaps/README.md). scripts/pdf-cmaps remakes them.
//
//go:embed pdfcmaps/*.gz
var pdfCollectionCMaps embed.FS

// pdfCollectionMaps caches each collection's parsed CMap (nil when it
// cannot be read), parsed on first use: a document without such a font
// costs nothing.
var pdfCollectionMaps sync.Map // ordering -> *sync.OnceValue result

// pdfCollectionCMap returns the CID-to-Unicode map of the Adobe character
// collection ordering ("Japan1", "GB1", "CNS1", "Korea1"), nil for any
// other.
func pdfCollectionCMap(ordering string) *pdfCMap {
	switch ordering {
	case "Japan1", "GB1", "CNS1", "Korea1":
	default:
		return nil
	}
	load, _ := pdfCollectionMaps.LoadOrStore(ordering, sync.OnceValue(func() *pdfCMap {
		f, err := pdfCollectionCMaps.Open("pdfcmaps/Adobe-" + ordering + "-UCS2.gz")
		if err != nil {
			return nil
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil
		}
		data, err := io.ReadAll(io.LimitReader(z, 4<<20))
		if err != nil {
			return nil
		}
		return pdfParseCMap(data)
	}))
	return load.(func() *pdfCMap)()
}

// pdfCIDDecoder is how a Type0 font without a ToUnicode CMap turns its
// two-byte codes into text, from its predefined /Encoding CMap and its
// CIDSystemInfo, as pdftotext does:
//   - Identity-H or Identity-V: the code is the CID, read through its
//     Adobe collection's CID-to-Unicode map;
//   - a Unicode encoding of the UCS2 or UTF16 kind (UniJIS-UCS2-H,
//     UniGB-UTF16-V, ...): the code is the UTF-16 code unit itself.
//
// Others (Shift-JIS, EUC, Big5 and the like, whose codes are one or two
// bytes) are not read: their glyphs count as undecodable.
type pdfCIDDecoder struct {
	collection *pdfCMap
	utf16      bool
}

// pdfNewCIDDecoder returns the decoder of a Type0 font with encoding (its
// /Encoding name) and ordering (its descendant's CIDSystemInfo /Ordering,
// registry Adobe), nil when neither rule applies.
func pdfNewCIDDecoder(encoding, registry, ordering string) *pdfCIDDecoder {
	switch {
	case encoding == "Identity-H" || encoding == "Identity-V":
		if registry != "Adobe" {
			return nil
		}
		if m := pdfCollectionCMap(ordering); m != nil {
			return &pdfCIDDecoder{collection: m}
		}
	case strings.HasPrefix(encoding, "Uni") && (strings.Contains(encoding, "-UCS2-") || strings.Contains(encoding, "-UTF16-")):
		return &pdfCIDDecoder{utf16: true}
	}
	return nil
}

// decode returns the text of a two-byte code, "" when unknown.
func (d *pdfCIDDecoder) decode(code uint16) string {
	if d.utf16 {
		if utf16.IsSurrogate(rune(code)) {
			return ""
		}
		return string(rune(code))
	}
	s, _ := d.collection.lookup(uint32(code), 2)
	if s == "\ufffd" {
		return ""
	}
	return s
}
