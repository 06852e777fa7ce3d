package engine_test

import (
	"fmt"
	"log"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

func ExampleHTMLToStructuredText() {
	page := `<html><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<main>
  <h1>Installation</h1>
  <p>Download the <b>latest</b> release.</p>
  <h2>Requirements</h2>
  <ul><li>Go 1.25</li><li>2 GB of memory</li></ul>
  <table>
    <tr><th>OS</th><th>Status</th></tr>
    <tr><td>Linux</td><td>supported</td></tr>
  </table>
  <p hidden>internal note</p>
</main>
<footer>© Example</footer>
</body></html>`
	paras, err := askyourdocs.HTMLToStructuredText(strings.NewReader(page))
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range paras {
		fmt.Printf("%-5v %-40q %s\n", p.Heading, p.Text, p.Breadcrumb)
	}
	// Output:
	// true  "Installation"                           Installation
	// false "Download the latest release."           Installation
	// true  "Requirements"                           Installation > Requirements
	// false "- Go 1.25"                              Installation > Requirements
	// false "- 2 GB of memory"                       Installation > Requirements
	// false "OS: Linux | Status: supported"          Installation > Requirements
}
