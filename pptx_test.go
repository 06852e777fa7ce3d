package engine

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

const pptxNSDecl = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

// pptxPackage returns the parts of a deck whose slides have the given
// p:sld contents (spTree children), in order; notes[i] (if not "") is the
// notes text of slide i+1.
func pptxPackage(slides []string, show []string, notes []string) map[string]string {
	rel := func(id, typ, target string) string {
		return `<Relationship Id="` + id + `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/` + typ + `" Target="` + target + `"/>`
	}
	files := map[string]string{
		"_rels/.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rel("rId1", "officeDocument", "ppt/presentation.xml") + `</Relationships>`,
	}
	var ids, rels string
	// The slide list order differs from the part names on purpose.
	for i := len(slides) - 1; i >= 0; i-- {
		ids = fmt.Sprintf(`<p:sldId id="%d" r:id="rId%d"/>`, 256+i, i+10) + ids
		rels += rel(fmt.Sprintf("rId%d", i+10), "slide", fmt.Sprintf("slides/s%d.xml", len(slides)-i))
		part := fmt.Sprintf("ppt/slides/s%d.xml", len(slides)-i)
		attr := ""
		if i < len(show) {
			attr = ` show="` + show[i] + `"`
		}
		files[part] = `<p:sld ` + pptxNSDecl + attr + `><p:cSld><p:spTree>` + slides[i] + `</p:spTree></p:cSld></p:sld>`
		if i < len(notes) && notes[i] != "" {
			np := fmt.Sprintf("ppt/notesSlides/n%d.xml", i)
			files[fmt.Sprintf("ppt/slides/_rels/s%d.xml.rels", len(slides)-i)] = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
				rel("rId1", "notesSlide", fmt.Sprintf("../notesSlides/n%d.xml", i)) + `</Relationships>`
			files[np] = `<p:notes ` + pptxNSDecl + `><p:cSld><p:spTree>` + pptxSp("sldImg", 0, 0, "") + pptxSp("body", 0, 0, notes[i]) + pptxSp("sldNum", 0, 0, "7") + `</p:spTree></p:cSld></p:notes>`
		}
	}
	files["ppt/presentation.xml"] = `<p:presentation ` + pptxNSDecl + `><p:sldIdLst>` + ids + `</p:sldIdLst></p:presentation>`
	files["ppt/_rels/presentation.xml.rels"] = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels + `</Relationships>`
	return files
}

// pptxSp returns a shape: a placeholder of type ph ("" for a text box)
// at x, y (no position when both are 0) holding paragraphs texts.
func pptxSp(ph string, x, y int, texts ...string) string {
	s := `<p:sp><p:nvSpPr><p:cNvPr id="1" name="s"/><p:cNvSpPr/><p:nvPr>`
	if ph != "" {
		s += `<p:ph type="` + ph + `"/>`
	}
	s += `</p:nvPr></p:nvSpPr><p:spPr>`
	if x != 0 || y != 0 {
		s += fmt.Sprintf(`<a:xfrm><a:off x="%d" y="%d"/><a:ext cx="10" cy="10"/></a:xfrm>`, x, y)
	}
	s += `</p:spPr><p:txBody>`
	for _, t := range texts {
		s += `<a:p><a:r><a:t>` + t + `</a:t></a:r></a:p>`
	}
	return s + `</p:txBody></p:sp>`
}

func TestExtractPptx(t *testing.T) {
	table := `<p:graphicFrame><p:xfrm><a:off x="100" y="900"/></p:xfrm><a:graphic><a:graphicData><a:tbl><a:tblPr firstRow="0"/>` +
		`<a:tr><a:tc><a:txBody><a:p><a:r><a:t>a</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>b</a:t></a:r></a:p></a:txBody></a:tc></a:tr>` +
		`</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
	files := pptxPackage([]string{
		// Body boxes given bottom-right first: read top to bottom, left to right.
		pptxSp("", 500, 800, "bottom") + pptxSp("", 900, 100, "top right") + pptxSp("title", 0, 0, "Intro") +
			pptxSp("", 100, 100, "top left", "second line") + pptxSp("ftr", 0, 0, "footer text") + table,
		pptxSp("title", 0, 0, "Hidden"),
		`<p:grpSp>` + pptxSp("body", 10, 10, "grouped") + `</p:grpSp>` +
			`<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="x">` + pptxSp("", 20, 20, "choice") +
			`</mc:Choice><mc:Fallback>` + pptxSp("", 20, 20, "fallback") + `</mc:Fallback></mc:AlternateContent>`,
	}, []string{"1", "0", "true"}, []string{"Say hello.", "", ""})
	data := zipOf(t, files)
	paras, err := extractPptx(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "H|Slide 1: Intro|Intro\nP|Slide 1: Intro|top left\nP|Slide 1: Intro|second line\nP|Slide 1: Intro|top right\nP|Slide 1: Intro|bottom\n" +
		"P|Slide 1: Intro|a | b\nP|Slide 1: Intro|Notes: Say hello.\nP|Slide 3|grouped\nP|Slide 3|choice\n"
	if got := mdTexts(paras); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, p := range paras {
		if (p.Breadcrumb == "Slide 3") != (p.PageNum == 3) {
			t.Errorf("PageNum %d for %q", p.PageNum, p.Text)
		}
	}

	delete(files, "ppt/slides/s1.xml")
	data = zipOf(t, files)
	if _, err := extractPptx(bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("missing slide part: %v", err)
	}
}

func FuzzExtractPptx(f *testing.F) {
	f.Add([]byte(pptxSp("title", 0, 0, "T")+pptxSp("", 5, 5, "x")), []byte("note"))
	f.Add([]byte(`<p:graphicFrame><a:tbl><a:tr><a:tc hMerge="1"><a:txBody><a:p><a:r><a:t>x</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></p:graphicFrame>`), []byte(""))
	f.Add([]byte(`<p:sp><p:txBody><a:p><a:r><a:t>`), []byte("<"))
	f.Fuzz(func(t *testing.T, slide, notes []byte) {
		data := zipOf(t, pptxPackage([]string{string(slide)}, nil, []string{string(notes)}))
		paras, err := extractPptx(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrInvalidDocument) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("unwrapped error: %v", err)
			}
			return
		}
		checkParagraphs(t, paras)
		for _, p := range paras {
			if p.PageNum != 1 {
				t.Fatalf("PageNum %d on a one-slide deck", p.PageNum)
			}
		}
	})
}
