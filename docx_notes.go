package engine

import (
	"encoding/xml"
	"strconv"
	"strings"
)

// noteReference puts the marker of a footnote or endnote reference into
// the paragraph's text and queues the note's text to follow the paragraph.
func (p *docxParser) noteReference(se xml.StartElement, txt *docxText, blk *docxBlock) {
	if p.inNote {
		return
	}
	id := docxAttr(se, "id")
	var marker, text string
	if se.Name.Local == "footnoteReference" {
		p.footCount++
		marker, text = "["+strconv.Itoa(p.footCount)+"]", p.notes[id]
	} else {
		p.endCount++
		marker, text = "["+docxRoman(p.endCount)+"]", p.endnotes[id]
	}
	txt.add(" " + marker + " ")
	if text != "" {
		blk.notes = append(blk.notes, marker+" "+text)
	}
}

// readNotes reads the notes (elem "footnote" or "endnote") of a notes part
// into into by ID, each note's paragraphs joined into one text. Separator
// notes are skipped.
func (p *docxParser) readNotes(d *xml.Decoder, elem string, into map[string]string) error {
	p.d, p.inNote = d, true
	defer func() { p.inNote = false }()
	return xmlEachToken(d, func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || !docxW(se.Name, elem) {
			return nil
		}
		switch docxAttr(se, "type") {
		case "separator", "continuationSeparator", "continuationNotice":
			if err := d.Skip(); err != nil {
				return err
			}
			return nil
		}
		blocks, err := p.parseBlocks(nil)
		if err != nil {
			return err
		}
		var b strings.Builder
		docxJoinText(&b, blocks)
		if len(into) < 100000 {
			into[docxAttr(se, "id")] = NormalizeSpaces(b.String())
		}
		return nil
	})
}

// docxNotes returns the queued notes of blocks and their text boxes.
func docxNotes(blocks []docxBlock, out []string) []string {
	for _, blk := range blocks {
		out = append(out, blk.notes...)
		out = docxNotes(blk.boxes, out)
	}
	return out
}
