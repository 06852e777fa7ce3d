package engine

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// ErrDocxTooLarge is the name ErrDocumentTooLarge had when only .docx was
// zip-based; it is the same error value.
//
// Deprecated: Use ErrDocumentTooLarge.
var ErrDocxTooLarge = ErrDocumentTooLarge

// zipLimits bounds the work a reader does on one zip archive.
type zipLimits struct {
	maxEntries  int    // entries in the zip directory
	maxDeclared uint64 // sum of the declared uncompressed sizes
	maxPart     int64  // bytes inflated from one part
	maxTotal    int64  // bytes inflated from all parts
}

// zipDefaultLimits are the limits documented on ErrDocumentTooLarge.
var zipDefaultLimits = zipLimits{
	maxEntries:  10000,
	maxDeclared: 1 << 30,
	maxPart:     128 << 20,
	maxTotal:    256 << 20,
}

// zipArchive is an opened zip archive with its entries by lower-case name
// (OPC part names are case-insensitive; ODF and EPUB names are compared the
// same way, which only matters for archives that differ in case alone) and
// the bytes inflated so far. Errors about the content wrap invalid, errors
// about sizes ErrDocumentTooLarge.
type zipArchive struct {
	files   map[string]*zip.File
	lim     zipLimits
	read    int64
	invalid error
}

// oleMagic starts an OLE compound file: a legacy .doc/.xls/.ppt, or an
// encrypted OOXML document.
const oleMagic = "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

// openZipArchive opens the zip archive of size bytes in r, checking the
// entry count and the declared sizes against lim. kind names the format in
// error messages (".pptx").
func openZipArchive(r io.ReaderAt, size int64, lim zipLimits, invalid error, kind string) (*zipArchive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		var magic [8]byte
		if n, _ := r.ReadAt(magic[:], 0); n == 8 && string(magic[:]) == oleMagic {
			return nil, fmt.Errorf("%w: an OLE compound file (a password-protected document or a legacy binary file renamed to %s), not a zip archive", invalid, kind)
		}
		return nil, fmt.Errorf("%w: not a zip archive (%w)", invalid, err)
	}
	if len(zr.File) > lim.maxEntries {
		return nil, fmt.Errorf("%w: %d entries (limit %d)", ErrDocumentTooLarge, len(zr.File), lim.maxEntries)
	}
	a := &zipArchive{files: make(map[string]*zip.File, len(zr.File)), lim: lim, invalid: invalid}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
		if declared > lim.maxDeclared || declared < f.UncompressedSize64 {
			return nil, fmt.Errorf("%w: declared uncompressed size over %d bytes", ErrDocumentTooLarge, lim.maxDeclared)
		}
		name := strings.ToLower(strings.TrimPrefix(f.Name, "/"))
		if _, dup := a.files[name]; !dup {
			a.files[name] = f
		}
	}
	return a, nil
}

// has reports whether the archive has the named part.
func (a *zipArchive) has(name string) bool {
	return a.files[strings.ToLower(name)] != nil
}

// open returns a reader of the named part that counts the bytes inflated
// against the limits, or nil when the part is missing.
func (a *zipArchive) open(name string) (io.ReadCloser, error) {
	f := a.files[strings.ToLower(name)]
	if f == nil {
		return nil, nil
	}
	left := min(a.lim.maxPart, a.lim.maxTotal-a.read)
	if f.UncompressedSize64 > uint64(max(left, 0)) {
		return nil, fmt.Errorf("%w: part %s declares %d bytes (limit %d)", ErrDocumentTooLarge, name, f.UncompressedSize64, left)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: open part %s: %w", a.invalid, name, err)
	}
	lr := &zipLimitedReader{r: rc, left: left, part: name, count: &a.read}
	return struct {
		io.Reader
		io.Closer
	}{lr, rc}, nil
}

// parse runs fn on a decoder reading the named part, counting the bytes
// inflated against the limits. A missing part is an error only if required.
func (a *zipArchive) parse(name string, required bool, fn func(*xml.Decoder) error) error {
	rc, err := a.open(name)
	if err != nil {
		return err
	}
	if rc == nil {
		if required {
			return fmt.Errorf("%w: missing part %s", a.invalid, name)
		}
		return nil
	}
	defer rc.Close()
	if err := fn(xml.NewDecoder(&xmlDepthReader{r: rc, max: xmlMaxDepth, maxToken: xmlMaxToken, part: name, invalid: a.invalid})); err != nil {
		if errors.Is(err, ErrDocumentTooLarge) || errors.Is(err, a.invalid) {
			return err
		}
		return fmt.Errorf("%w: part %s: %w", a.invalid, name, err)
	}
	return nil
}

// xmlEachToken calls fn with every token d reads, to the end of the
// input: it returns nil there, or the first error of d or fn.
func xmlEachToken(d *xml.Decoder, fn func(xml.Token) error) error {
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// readHead returns at most the first n bytes of the named part (nil when it
// is missing), reading no more of it: for a short part such as ODF's
// mimetype, which a hostile file may inflate to the part limit.
func (a *zipArchive) readHead(name string, n int64) ([]byte, error) {
	rc, err := a.open(name)
	if err != nil || rc == nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, n))
	if err != nil {
		if errors.Is(err, ErrDocumentTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: part %s: %w", a.invalid, name, err)
	}
	return b, nil
}

// zipLimitedReader reads at most left bytes from r, adding them to *count;
// reading past the limit is an error wrapping ErrDocumentTooLarge.
type zipLimitedReader struct {
	r     io.Reader
	left  int64
	part  string
	count *int64
}

func (l *zipLimitedReader) Read(b []byte) (int, error) {
	if l.left <= 0 {
		var probe [1]byte
		if n, err := l.r.Read(probe[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: part %s inflates beyond the limit", ErrDocumentTooLarge, l.part)
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	*l.count += int64(n)
	return n, err
}

// opcRel is one relationship of an Office Open XML package part.
type opcRel struct {
	ID, Type, Target string // Type is the last element of the type URI
}

// relList returns the internal relationships in the named .rels part, in
// document order, targets resolved against dir. A missing part gives none.
func (a *zipArchive) relList(name, dir string) ([]opcRel, error) {
	var doc struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
			Mode   string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if err := a.parse(name, false, func(d *xml.Decoder) error { return d.Decode(&doc) }); err != nil {
		return nil, err
	}
	out := make([]opcRel, 0, len(doc.Rels))
	for _, r := range doc.Rels {
		if strings.EqualFold(r.Mode, "External") || r.Target == "" {
			continue
		}
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = path.Clean(t[1:])
		} else {
			t = path.Join(dir, t)
		}
		out = append(out, opcRel{ID: r.ID, Type: r.Type[strings.LastIndexByte(r.Type, '/')+1:], Target: t})
	}
	return out, nil
}

// rels returns the targets of the relationships in the named part by the
// last element of their type (officeDocument, styles, numbering, ...),
// resolved against dir; the first one of a type wins. A missing part gives
// no relationships.
func (a *zipArchive) rels(name, dir string) (map[string]string, error) {
	list, err := a.relList(name, dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list))
	for _, r := range list {
		if _, ok := out[r.Type]; !ok {
			out[r.Type] = r.Target
		}
	}
	return out, nil
}

// partRels returns the relationships of an OPC part (from
// dir/_rels/base.rels), targets resolved against the part's directory.
func (a *zipArchive) partRels(part string) ([]opcRel, error) {
	dir := path.Dir(part)
	return a.relList(path.Join(dir, "_rels", path.Base(part)+".rels"), dir)
}

// opcMainPart returns the package's main part from _rels/.rels (the
// officeDocument relationship), or def when there is none.
func (a *zipArchive) opcMainPart(def string) (string, error) {
	rels, err := a.rels("_rels/.rels", "")
	if err != nil {
		return "", err
	}
	if t := rels["officeDocument"]; t != "" {
		return t, nil
	}
	return def, nil
}
