package engine_test

import (
	"fmt"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// BuildChunks keeps a heading with the text that follows it, never lets a
// chunk cross into the next section, and fills Pages, Section, Top and
// Breadcrumb from the paragraphs. ParentText (not printed) is the larger
// window to give the model at answer time; Pages are that window's pages,
// and Top is the short label of the top-level heading ("A").
func ExampleBuildChunks() {
	paras := []askyourdocs.Paragraph{
		{Text: "A. User guide", PageNum: 1, Heading: true, Breadcrumb: "A. User guide"},
		{Text: "Installing", PageNum: 1, Heading: true, Breadcrumb: "A. User guide > Installing"},
		{Text: "Download the installer and run it. It asks for the target folder.", PageNum: 1, Breadcrumb: "A. User guide > Installing"},
		{Text: "Restart when it is done.", PageNum: 2, Breadcrumb: "A. User guide > Installing"},
		{Text: "Updating", PageNum: 2, Heading: true, Breadcrumb: "A. User guide > Updating"},
		{Text: "Updates install themselves.", PageNum: 2, Breadcrumb: "A. User guide > Updating"},
	}
	for _, c := range askyourdocs.BuildChunks(paras, 60, 20) {
		fmt.Printf("pages %s | top %q | section %q | %s\n%s\n\n", c.Pages, c.Top, c.Section, c.Breadcrumb, c.Text)
	}
	// Output:
	// pages 1-2 | top "A" | section "Installing" | A. User guide > Installing
	// A. User guide
	// Installing
	// Download the installer and run it.
	//
	// pages 1-2 | top "A" | section "Installing" | A. User guide > Installing
	// and run it. It asks for the target folder.
	//
	// pages 1-2 | top "A" | section "Installing" | A. User guide > Installing
	// the target folder.
	// Restart when it is done.
	//
	// pages 2 | top "A" | section "Updating" | A. User guide > Updating
	// Updating
	// Updates install themselves.
}
