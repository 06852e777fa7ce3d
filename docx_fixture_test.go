package engine

import (
	"archive/zip"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// docxGenerate rewrites the hand-written fixtures under testdata/docx.
var docxGenerate = flag.Bool("docx.generate", false, "rewrite the hand-written .docx fixtures in testdata/docx")

// docxZip returns a zip archive holding files (name -> content), written
// deterministically (sorted names, fixed times).
func docxZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const docxNSDecl = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ` +
	`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ` +
	`xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" ` +
	`xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" ` +
	`xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ` +
	`xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" ` +
	`xmlns:v="urn:schemas-microsoft-com:vml" mc:Ignorable="wps"`

// docxPackage returns the parts of a minimal package around body (the
// content of w:body), with optional styles, numbering, footnotes and
// endnotes parts (empty strings leave a part out).
func docxPackage(body, styles, numbering, footnotes, endnotes string) map[string]string {
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document ` + docxNSDecl + `><w:body>` + body + `</w:body></w:document>`,
	}
	var rels strings.Builder
	rels.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for _, part := range []struct{ name, typ, content, root string }{
		{"styles.xml", "styles", styles, "styles"},
		{"numbering.xml", "numbering", numbering, "numbering"},
		{"footnotes.xml", "footnotes", footnotes, "footnotes"},
		{"endnotes.xml", "endnotes", endnotes, "endnotes"},
	} {
		if part.content == "" {
			continue
		}
		rels.WriteString(`<Relationship Id="r` + part.typ + `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/` + part.typ + `" Target="` + part.name + `"/>`)
		files["word/"+part.name] = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:` + part.root + ` ` + docxNSDecl + `>` + part.content + `</w:` + part.root + `>`
	}
	rels.WriteString(`</Relationships>`)
	files["word/_rels/document.xml.rels"] = rels.String()
	return files
}

// docxPara returns a paragraph in style (none if "") holding inner runs.
func docxPara(style, inner string) string {
	if style == "" {
		return `<w:p>` + inner + `</w:p>`
	}
	return `<w:p><w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>` + inner + `</w:p>`
}

// docxRun returns a run of text.
func docxRun(text string) string {
	return `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r>`
}

// docxLocalisedStyles are French style IDs whose names are the built-in
// English names, as Word writes them for a French document.
const docxLocalisedStyles = `<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Titre"><w:name w:val="Title"/><w:basedOn w:val="Normal"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Titre1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:keepNext/><w:outlineLvl w:val="0"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Titre2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="TitreAnnexe"><w:name w:val="Titre annexe"/><w:basedOn w:val="Titre1"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Listepuces"><w:name w:val="List Bullet"/><w:basedOn w:val="Normal"/><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Citation"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/></w:style>` +
	`<w:style w:type="character" w:styleId="Titre1Car"><w:name w:val="Titre 1 Car"/></w:style>`

const docxLocalisedNumbering = `<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val=""/></w:lvl></w:abstractNum>` +
	`<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>` +
	`<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%2)"/></w:lvl>` +
	`<w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="%1.%3."/></w:lvl></w:abstractNum>` +
	`<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>` +
	`<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>` +
	`<w:num w:numId="3"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="4"/></w:lvlOverride></w:num>`

const docxLocalisedFootnotes = `<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>` +
	`<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>` +
	`<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r>` + `<w:r><w:t xml:space="preserve"> Source : archives internes, </w:t></w:r></w:p><w:p><w:r><w:t>volume 2.</w:t></w:r></w:p></w:footnote>` +
	`<w:footnote w:id="2"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> Chiffres provisoires.</w:t></w:r></w:p></w:footnote>`

const docxLocalisedEndnotes = `<w:endnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:endnote>` +
	`<w:endnote w:id="1"><w:p><w:r><w:endnoteRef/></w:r><w:r><w:t xml:space="preserve"> Note de fin sur l'annexe.</w:t></w:r></w:p></w:endnote>`

func docxNumbered(style, numID, ilvl, text string) string {
	return `<w:p><w:pPr><w:pStyle w:val="` + style + `"/><w:numPr><w:ilvl w:val="` + ilvl + `"/><w:numId w:val="` + numID + `"/></w:numPr></w:pPr>` + docxRun(text) + `</w:p>`
}

// docxLocalisedBody is the body of testdata/docx/localised.docx.
func docxLocalisedBody() string {
	cell := func(text, extra string) string {
		return `<w:tc><w:tcPr><w:tcW w:w="2000" w:type="dxa"/>` + extra + `</w:tcPr>` + docxPara("", docxRun(text)) + `</w:tc>`
	}
	textBox := `<w:r><w:t xml:space="preserve">Voir l'encadré ci-contre.</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="1" name="Zone de texte 1"/><a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:txbx><w:txbxContent>` +
		docxPara("", docxRun("Encadré : chiffres clés de l'année.")) + docxPara("Titre2", docxRun("Pas un titre dans un encadré")) +
		`</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>` +
		docxPara("", docxRun("Encadré : chiffres clés de l'année.")) + docxPara("Titre2", docxRun("Pas un titre dans un encadré")) +
		`</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>`
	return docxPara("Titre", docxRun("Rapport annuel")) +
		docxPara("", docxRun("Introduction générale du document.")) +
		docxPara("Titre1", docxRun("Contexte")) +
		docxPara("", docxRun("Le projet a commencé en 2020")+`<w:r><w:rPr><w:rStyle w:val="Appelnotedebasdep"/></w:rPr><w:footnoteReference w:id="1"/></w:r>`+docxRun(" et continue.")) +
		docxPara("Listepuces", docxRun("Premier point")) +
		docxPara("Listepuces", docxRun("Second point")) +
		docxNumbered("", "2", "0", "Étape un") +
		docxNumbered("", "2", "0", "Étape deux") +
		docxNumbered("", "2", "1", "Sous-étape") +
		docxNumbered("", "2", "1", "Autre sous-étape") +
		docxNumbered("", "2", "2", "Détail") +
		docxNumbered("", "2", "0", "Étape trois") +
		docxNumbered("", "3", "0", "Liste reprise à quatre") +
		docxPara("", `<w:r><w:br w:type="page"/></w:r>`+docxRun("Texte sur la page deux, mot")+`<w:r><w:tab/></w:r>`+docxRun("après\u00a0tabulation.")) +
		docxPara("Titre2", docxRun("Données")) +
		`<w:tbl><w:tblPr><w:tblStyle w:val="Grilledutableau"/><w:tblLook w:val="04A0" w:firstRow="1"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid>` +
		`<w:tr><w:trPr><w:tblHeader/></w:trPr>` + cell("Nom", "") + cell("Âge", "") + cell("Ville", "") + `</w:tr>` +
		`<w:tr>` + cell("Alice", "") + cell("42", "") + cell("Paris", "") + `</w:tr>` +
		`<w:tr>` + cell("Bob", "") + cell("", "") + `<w:tc><w:tcPr/>` + docxPara("", docxRun("Lyon")+`<w:r><w:footnoteReference w:id="2"/></w:r>`) + `</w:tc></w:tr>` +
		`<w:tr>` + cell("Total des deux", `<w:gridSpan w:val="2"/>`) + cell("2 villes", "") + `</w:tr>` +
		`</w:tbl>` +
		docxPara("", textBox) +
		docxPara("Citation", docxRun("Texte ")+`<w:del w:id="7" w:author="X"><w:r><w:delText>supprimé </w:delText></w:r></w:del><w:ins w:id="8" w:author="X">`+docxRun("ajouté ")+`</w:ins>`+
			`<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>`+docxRun("2")+`<w:r><w:fldChar w:fldCharType="end"/></w:r>`+
			`<w:hyperlink r:id="rId9">`+docxRun(" et un lien.")+`</w:hyperlink>`) +
		`<w:p><w:pPr><w:sectPr><w:type w:val="nextPage"/><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:pPr>` + docxRun("Fin de la première section.") + `</w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="TitreAnnexe"/></w:pPr><w:r><w:lastRenderedPageBreak/><w:t>Annexe</w:t></w:r></w:p>` +
		docxPara("", docxRun("Texte de l'annexe.")+`<w:r><w:endnoteReference w:id="1"/></w:r>`) +
		`<w:sdt><w:sdtPr><w:alias w:val="Bloc"/></w:sdtPr><w:sdtContent>` + docxPara("", docxRun("Dans un contrôle de contenu.")) + `</w:sdtContent></w:sdt>` +
		`<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:lastRenderedPageBreak/><w:t>Nouvelle page forcée.</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:sectPr><w:type w:val="nextPage"/></w:sectPr></w:pPr>` + docxRun("Fin de page A") + `<w:r><w:lastRenderedPageBreak/><w:t xml:space="preserve"> suite.</w:t></w:r></w:p>` +
		docxPara("", docxRun("Dernier paragraphe, même page.")) +
		docxPara("", "") +
		`<w:sectPr><w:type w:val="continuous"/></w:sectPr>`
}

func TestDocxGenerateFixtures(t *testing.T) {
	if !*docxGenerate {
		t.Skip("run with -docx.generate to rewrite the hand-written fixtures")
	}
	files := docxPackage(docxLocalisedBody(), docxLocalisedStyles, docxLocalisedNumbering, docxLocalisedFootnotes, docxLocalisedEndnotes)
	if err := os.WriteFile(filepath.Join("testdata", "docx", "localised.docx"), docxZip(t, files), 0o644); err != nil {
		t.Fatal(err)
	}
}
