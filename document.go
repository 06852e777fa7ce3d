package engine

// Paragraph is one block of text extracted from a document or web page, in
// reading order.
type Paragraph struct {
	// Text is the paragraph's text with whitespace normalised.
	Text string
	// PageNum is the 1-based page the paragraph starts on (0 when the source
	// has no pages, such as a web page).
	PageNum int
	// Heading reports whether the paragraph is a section heading.
	Heading bool
	// Breadcrumb is the path of headings above (and including, for a
	// heading) this paragraph, joined with " > ".
	Breadcrumb string
}

// Chunk is a piece of a document sized for embedding, built by BuildChunks.
type Chunk struct {
	Text, ParentText, Pages, Section, Top, Breadcrumb, URL string
}
