package engine

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docxUpdate rewrites the golden paragraphs of the .docx fixtures.
var docxUpdate = flag.Bool("docx.update", false, "rewrite testdata/docx/*.golden.json from the reader's output")

// docxFixture extracts a fixture under testdata/docx.
func docxFixture(t *testing.T, name string) []Paragraph {
	t.Helper()
	paras, err := ExtractParagraphs(filepath.Join("testdata", "docx", name))
	if err != nil {
		t.Fatal(err)
	}
	return paras
}

// docxFind returns the paragraphs whose text contains s.
func docxFind(paras []Paragraph, s string) []Paragraph {
	var out []Paragraph
	for _, p := range paras {
		if strings.Contains(p.Text, s) {
			out = append(out, p)
		}
	}
	return out
}

// docxOne returns the only paragraph containing s.
func docxOne(t *testing.T, paras []Paragraph, s string) Paragraph {
	t.Helper()
	found := docxFind(paras, s)
	if len(found) != 1 {
		t.Fatalf("want exactly one paragraph containing %q, got %d: %+v", s, len(found), found)
	}
	return found[0]
}

// docxIndex returns the index of the only paragraph whose text is s.
func docxIndex(t *testing.T, paras []Paragraph, s string) int {
	t.Helper()
	at := -1
	for i, p := range paras {
		if p.Text == s {
			if at >= 0 {
				t.Fatalf("paragraph %q appears twice", s)
			}
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no paragraph %q", s)
	}
	return at
}

func TestDocxGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "docx", "*.docx"))
	if err != nil || len(files) < 3 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false) // keep " > " readable
			enc.SetIndent("", "  ")
			if err := enc.Encode(docxFixture(t, name)); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			golden := strings.TrimSuffix(f, ".docx") + ".golden.json"
			if *docxUpdate {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestDocxGolden -docx.update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("paragraphs differ from %s (rerun with -docx.update after checking):\n%s", golden, got)
			}
		})
	}
}

func TestDocxLocalisedHeadings(t *testing.T) {
	paras := docxFixture(t, "localised.docx")
	for _, c := range []struct {
		text, crumb string
	}{
		{"Rapport annuel", "Rapport annuel"},               // style ID Titre, name Title
		{"Contexte", "Rapport annuel > Contexte"},          // Titre1 = heading 1
		{"Données", "Rapport annuel > Contexte > Données"}, // Titre2 = heading 2
		{"Annexe", "Rapport annuel > Annexe"},              // TitreAnnexe based on Titre1
	} {
		p := paras[docxIndex(t, paras, c.text)]
		if !p.Heading || p.Breadcrumb != c.crumb {
			t.Errorf("%q: heading %v breadcrumb %q, want heading with %q", c.text, p.Heading, p.Breadcrumb, c.crumb)
		}
	}
	var headings int
	for _, p := range paras {
		if p.Heading {
			headings++
		}
	}
	if headings != 4 {
		t.Errorf("got %d headings, want 4 (a heading style inside a text box is not a heading)", headings)
	}
	if p := docxOne(t, paras, "Texte de l'annexe."); p.Breadcrumb != "Rapport annuel > Annexe" || p.Heading {
		t.Errorf("body paragraph: %+v", p)
	}
}

func TestDocxTableRows(t *testing.T) {
	paras := docxFixture(t, "localised.docx")
	for _, want := range []string{
		"Nom: Alice | Âge: 42 | Ville: Paris",
		"Nom: Bob | Ville: Lyon [2]",            // empty cell left out
		"Nom: Total des deux | Ville: 2 villes", // gridSpan keeps columns aligned
	} {
		docxIndex(t, paras, want)
	}
	if len(docxFind(paras, "Nom | Âge")) != 0 {
		t.Error("header row emitted although it labels the data rows")
	}
	birds := docxFixture(t, "birds.docx")
	docxIndex(t, birds, "Species: Blue tit | Count: 12 | Month: February")
	recipes := docxFixture(t, "recipes.docx")
	docxIndex(t, recipes, "Ingredient: Salt | Amount: 10 g")
}

func TestDocxHeaderRowCases(t *testing.T) {
	cell := func(text string, span int) docxCell { return docxCell{text: text, span: span} }
	rows := []docxRow{
		{header: true, cells: []docxCell{cell("Sales 2024", 2)}}, // caption
		{header: true, cells: []docxCell{cell("Quarter", 1), cell("Amount", 1)}},
		{cells: []docxCell{cell("Q1", 1), cell("10", 1)}},
	}
	var got []string
	for _, b := range docxRowBlocks(rows) {
		got = append(got, b.text)
	}
	want := []string{"Sales 2024", "Quarter: Q1 | Amount: 10"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
	// Only header rows: they are the data.
	got = nil
	for _, b := range docxRowBlocks(rows[1:2]) {
		got = append(got, b.text)
	}
	if len(got) != 1 || got[0] != "Quarter | Amount" {
		t.Errorf("header-only table: %q", got)
	}
}

func TestDocxLists(t *testing.T) {
	paras := docxFixture(t, "localised.docx")
	for _, want := range []string{
		"- Premier point", "- Second point", // bullets through the List Bullet style
		"1. Étape un", "2. Étape deux", "a) Sous-étape", "b) Autre sous-étape",
		"2.i. Détail", "3. Étape trois", // nested level restarts, outer continues
		"4. Liste reprise à quatre", // startOverride
	} {
		docxIndex(t, paras, want)
	}
	birds := docxFixture(t, "birds.docx")
	for _, want := range []string{"- Orange-red breast and face", "- Paler in juveniles", "1. Pick a quiet hour.", "a) Do not add up visits.", "b) Note the weather.", "3. Send the results."} {
		docxIndex(t, birds, want)
	}
}

func TestDocxNotesAndTextBoxes(t *testing.T) {
	paras := docxFixture(t, "localised.docx")
	ref := docxIndex(t, paras, "Le projet a commencé en 2020 [1] et continue.")
	if got := paras[ref+1].Text; got != "[1] Source : archives internes, volume 2." {
		t.Errorf("footnote after its reference: %q", got)
	}
	if got := paras[docxIndex(t, paras, "Texte de l'annexe. [i]")+1].Text; got != "[i] Note de fin sur l'annexe." {
		t.Errorf("endnote after its reference: %q", got)
	}
	anchor := docxIndex(t, paras, "Voir l'encadré ci-contre.")
	if got := paras[anchor+1].Text; got != "Encadré : chiffres clés de l'année." {
		t.Errorf("text box after its anchor: %q", got)
	}
	// The VML fallback of the text box holds the same text: read once.
	docxOne(t, paras, "chiffres clés")
	p := docxOne(t, paras, "Texte ajouté")
	if p.Text != "Texte ajouté 2 et un lien." {
		t.Errorf("revisions and fields: %q (deleted text and field codes must be left out)", p.Text)
	}

	birds := docxFixture(t, "birds.docx")
	ref = docxIndex(t, birds, "The robin [1] is easy to spot all year round.")
	if birds[ref+1].Text != "[1] Erithacus rubecula, the European robin." {
		t.Errorf("LibreOffice footnote: %q", birds[ref+1].Text)
	}
	anchor = docxIndex(t, birds, "Feeding tips are in the box.")
	if birds[anchor+1].Text != "Tip: hang feeders two metres from cover." {
		t.Errorf("LibreOffice text box: %q", birds[anchor+1].Text)
	}
	docxOne(t, birds, "hang feeders")
}

func TestDocxPages(t *testing.T) {
	paras := docxFixture(t, "localised.docx")
	for _, c := range []struct {
		text string
		page int
	}{
		{"Rapport annuel", 1},
		{"4. Liste reprise à quatre", 1},
		{"Texte sur la page deux, mot après tabulation.", 2}, // explicit break
		{"Fin de la première section.", 2},
		{"Annexe", 3},                         // nextPage section; the rendered break is the same break
		{"[i] Note de fin sur l'annexe.", 3},  // notes take the page of their reference
		{"Nouvelle page forcée.", 4},          // pageBreakBefore (+ rendered break, same)
		{"Fin de page A suite.", 4},           // starts on 4, rendered break inside
		{"Dernier paragraphe, même page.", 5}, // after a continuous section break
	} {
		if p := paras[docxIndex(t, paras, c.text)]; p.PageNum != c.page {
			t.Errorf("%q on page %d, want %d", c.text, p.PageNum, c.page)
		}
	}
	birds := docxFixture(t, "birds.docx")
	if p := birds[docxIndex(t, birds, "Last winter's counts, by species:")]; p.PageNum != 2 {
		t.Errorf("LibreOffice page break: page %d", p.PageNum)
	}
	if p := birds[docxIndex(t, birds, "Sightings")]; p.PageNum != 1 {
		t.Errorf("heading before the break: page %d", p.PageNum)
	}
}

// docxBytes returns a package around body with the localised styles.
func docxBytes(t testing.TB, body string) []byte {
	return docxZip(t, docxPackage(body, docxLocalisedStyles, docxLocalisedNumbering, "", ""))
}

func TestDocxZipBomb(t *testing.T) {
	small := docxBytes(t, docxPara("", docxRun(strings.Repeat("word ", 400))))
	for _, c := range []struct {
		name string
		lim  docxLimits
	}{
		{"entries", docxLimits{maxEntries: 3, maxDeclared: 1 << 30, maxPart: 1 << 30, maxTotal: 1 << 30, maxDepth: 8}},
		{"declared", docxLimits{maxEntries: 100, maxDeclared: 1500, maxPart: 1 << 30, maxTotal: 1 << 30, maxDepth: 8}},
		{"part", docxLimits{maxEntries: 100, maxDeclared: 1 << 30, maxPart: 1000, maxTotal: 1 << 30, maxDepth: 8}},
		{"total", docxLimits{maxEntries: 100, maxDeclared: 1 << 30, maxPart: 1 << 20, maxTotal: 2500, maxDepth: 8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readDocx(bytes.NewReader(small), int64(len(small)), c.lim)
			if !errors.Is(err, ErrDocxTooLarge) {
				t.Fatalf("got %v, want ErrDocxTooLarge", err)
			}
		})
	}
	if _, err := readDocx(bytes.NewReader(small), int64(len(small)), docxDefaultLimits); err != nil {
		t.Fatalf("default limits reject a small document: %v", err)
	}

	t.Run("real bomb, default limits", func(t *testing.T) {
		// 200 MiB of spaces inside the body, deflated to about 200 KiB:
		// one sync-flushed deflate segment of 1 MiB repeated 200 times.
		head := []byte(`<w:document ` + docxNSDecl + `><w:body><w:p><w:r><w:t>`)
		spaces := bytes.Repeat([]byte(" "), 1<<20)
		var seg, stream bytes.Buffer
		fw, _ := flate.NewWriter(&seg, flate.BestCompression)
		fw.Write(spaces)
		fw.Flush()
		fw2, _ := flate.NewWriter(&stream, flate.BestCompression)
		fw2.Write(head)
		fw2.Flush()
		crc := crc32.NewIEEE()
		crc.Write(head)
		for range 200 {
			stream.Write(seg.Bytes())
			crc.Write(spaces)
		}
		fw3, _ := flate.NewWriter(&stream, flate.BestCompression)
		fw3.Close() // final empty block
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(stream.Len()), UncompressedSize64: uint64(len(head)) + 200<<20})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(stream.Bytes())
		zw.Close()
		data := buf.Bytes()
		_, err = extractDocxReader(bytes.NewReader(data), int64(len(data)))
		if !errors.Is(err, ErrDocxTooLarge) {
			t.Fatalf("got %v, want ErrDocxTooLarge", err)
		}
	})

	t.Run("lying header", func(t *testing.T) {
		// The directory declares 1,000 bytes; the data inflates to 10 MiB.
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, flate.BestCompression)
		fw.Write([]byte(`<w:document ` + docxNSDecl + `><w:body><w:p><w:r><w:t>`))
		fw.Write(bytes.Repeat([]byte("a"), 10<<20))
		fw.Close()
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate,
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: 1000})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
		zw.Close()
		_, err = extractDocxReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if !errors.Is(err, ErrInvalidDocx) && !errors.Is(err, ErrDocxTooLarge) {
			t.Fatalf("got %v, want a wrapped sentinel", err)
		}
	})
}

func TestDocxMalformed(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "docx", "birds.docx"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := func(mutate func(map[string]string)) []byte {
		files := docxPackage(docxPara("", docxRun("text")), docxLocalisedStyles, docxLocalisedNumbering, docxLocalisedFootnotes, "")
		mutate(files)
		return docxZip(t, files)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"not a zip", []byte("%PDF-1.4 this is not a zip archive")},
		{"empty", nil},
		{"truncated zip", good[:len(good)/2]},
		{"no document part", pkg(func(m map[string]string) { delete(m, "word/document.xml") })},
		{"truncated document XML", pkg(func(m map[string]string) {
			m["word/document.xml"] = m["word/document.xml"][:len(m["word/document.xml"])-30]
		})},
		{"no body", pkg(func(m map[string]string) {
			m["word/document.xml"] = `<w:document ` + docxNSDecl + `></w:document>`
		})},
		{"bad styles XML", pkg(func(m map[string]string) { m["word/styles.xml"] = "<w:styles><w:style>" })},
		{"bad footnotes XML", pkg(func(m map[string]string) { m["word/footnotes.xml"] = "<w:footnotes ><</w:footnotes>" })},
		{"bad rels", pkg(func(m map[string]string) { m["_rels/.rels"] = "<Relationships><" })},
		{"mismatched tags", pkg(func(m map[string]string) {
			m["word/document.xml"] = `<w:document ` + docxNSDecl + `><w:body><w:p><w:r><w:t>x</w:r></w:t></w:p></w:body></w:document>`
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := extractDocxReader(bytes.NewReader(c.data), int64(len(c.data)))
			if !errors.Is(err, ErrInvalidDocx) {
				t.Fatalf("got %v, want ErrInvalidDocx", err)
			}
		})
	}
	_, err = ExtractParagraphs(filepath.Join(t.TempDir(), "missing.docx"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestDocxDeepNesting(t *testing.T) {
	// Tables nested far deeper than the limit, and text boxes in text
	// boxes: read without exhausting the stack, text up to the limit kept.
	var body strings.Builder
	for range 500 {
		body.WriteString(`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell</w:t></w:r></w:p>`)
	}
	for range 500 {
		body.WriteString(`</w:tc></w:tr></w:tbl>`)
	}
	for range 500 {
		body.WriteString(`<w:p><w:r><w:t>box</w:t><w:drawing><w:txbxContent>`)
	}
	for range 500 {
		body.WriteString(`</w:txbxContent></w:drawing></w:r></w:p>`)
	}
	data := docxBytes(t, body.String())
	paras, err := extractDocxReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(paras) == 0 || !strings.Contains(paras[0].Text, "cell") {
		t.Errorf("nested tables lost: %+v", paras)
	}
}

func TestDocxStrictNamespaceAndNoStyles(t *testing.T) {
	// A document without styles.xml: nothing is a heading, text is kept;
	// strict OOXML's namespace is read like the transitional one.
	doc := `<w:document xmlns:w="http://purl.oclc.org/ooxml/wordprocessingml/main"><w:body>` +
		docxPara("Heading1", docxRun("Not known as heading")) + docxPara("", docxRun("Body")) + `</w:body></w:document>`
	data := docxZip(t, map[string]string{"word/document.xml": doc})
	paras, err := extractDocxReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(paras) != 2 || paras[0].Heading || paras[1].Text != "Body" || paras[1].PageNum != 1 {
		t.Errorf("got %+v", paras)
	}
}

// docxCheckFuzzResult checks the invariants of the reader's output.
func docxCheckFuzzResult(t *testing.T, paras []Paragraph, err error) {
	if err != nil {
		if !errors.Is(err, ErrInvalidDocx) && !errors.Is(err, ErrDocxTooLarge) {
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		return
	}
	for _, p := range paras {
		if p.Text == "" || p.Text != NormalizeSpaces(p.Text) {
			t.Fatalf("paragraph text not normalised: %q", p.Text)
		}
		if p.PageNum < 1 {
			t.Fatalf("page %d", p.PageNum)
		}
	}
	BuildChunks(paras, 200, 40)
}

// FuzzDocxXML fuzzes the XML layer: data is word/document.xml of a package
// with the localised fixture's styles, numbering and notes (mutating the
// zip itself mostly breaks its checksums before the XML is reached).
func FuzzDocxXML(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "docx", "*.docx"))
	for _, name := range files {
		zr, err := zip.OpenReader(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, zf := range zr.File {
			if zf.Name == "word/document.xml" {
				rc, _ := zf.Open()
				data, _ := io.ReadAll(rc)
				rc.Close()
				f.Add(data)
			}
		}
		zr.Close()
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		files := docxPackage("", docxLocalisedStyles, docxLocalisedNumbering, docxLocalisedFootnotes, docxLocalisedEndnotes)
		files["word/document.xml"] = string(doc)
		data := docxZip(t, files)
		paras, err := extractDocxReader(bytes.NewReader(data), int64(len(data)))
		docxCheckFuzzResult(t, paras, err)
	})
}

func FuzzDocxReader(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "docx", "*.docx"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(docxBytes(f, docxLocalisedBody()))
	f.Fuzz(func(t *testing.T, data []byte) {
		paras, err := extractDocxReader(bytes.NewReader(data), int64(len(data)))
		docxCheckFuzzResult(t, paras, err)
	})
}

func TestDocxMathOLEAndHeaderNotes(t *testing.T) {
	body := `<w:p>` + docxRun("Energy is ") + `<m:oMath xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"><m:r><m:t>E=m</m:t></m:r><m:sSup><m:e><m:r><m:t>c</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath>` + docxRun(".") + `</w:p>` +
		`<w:tbl><w:tr><w:trPr><w:tblHeader/></w:trPr><w:tc>` + docxPara("", docxRun("Unit")+`<w:r><w:footnoteReference w:id="2"/></w:r>`) + `</w:tc></w:tr>` +
		`<w:tr><w:tc>` + docxPara("", docxRun("kg")) + `</w:tc></w:tr></w:tbl>`
	data := docxZip(t, docxPackage(body, docxLocalisedStyles, "", docxLocalisedFootnotes, ""))
	paras, err := extractDocxReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paras {
		got = append(got, p.Text)
	}
	want := []string{"Energy is E=mc2.", "Unit [1]: kg", "[1] Chiffres provisoires."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}

	ole := append([]byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"), make([]byte, 600)...)
	_, err = extractDocxReader(bytes.NewReader(ole), int64(len(ole)))
	if !errors.Is(err, ErrInvalidDocx) || !strings.Contains(err.Error(), "password-protected") {
		t.Errorf("OLE file: %v", err)
	}
}

func TestDocxPlaceholdersAndEmptyItems(t *testing.T) {
	// Content controls showing their placeholder are left out, filled ones
	// kept; a list item with no text is no paragraph.
	sdt := func(placeholder bool, text string) string {
		pr := `<w:sdtPr><w:alias w:val="x"/></w:sdtPr>`
		if placeholder {
			pr = `<w:sdtPr><w:temporary/><w:showingPlcHdr/><w:text/></w:sdtPr>`
		}
		return `<w:sdt>` + pr + `<w:sdtContent>` + docxRun(text) + `</w:sdtContent></w:sdt>`
	}
	body := docxPara("", docxRun("Dear ")+sdt(true, "Click here to enter text.")+sdt(false, "Alice")+docxRun(",")) +
		`<w:sdt><w:sdtPr><w:showingPlcHdr/></w:sdtPr><w:sdtContent>` + docxPara("", docxRun("Type the body here.")) + `</w:sdtContent></w:sdt>` +
		docxNumbered("", "1", "0", "") + docxNumbered("", "1", "0", "Item") + docxNumbered("", "2", "0", " ")
	data := docxBytes(t, body)
	paras, err := extractDocxReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paras {
		got = append(got, p.Text)
		if p.PageNum != 1 {
			t.Errorf("%q on page %d", p.Text, p.PageNum)
		}
	}
	want := []string{"Dear Alice,", "- Item"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}
