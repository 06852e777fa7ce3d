package engine

import "testing"

func TestPDFTrimAfterEOF(t *testing.T) {
	for in, want := range map[string]string{
		"%PDF-1.4 body\n%%EOF\n":                         "%PDF-1.4 body\n%%EOF\n",
		"%PDF-1.4 body\n%%EOF":                           "%PDF-1.4 body\n%%EOF",
		"%PDF-1.4 body\n%%EOF\ntrailer\n<< /Size 3 >>\n": "%PDF-1.4 body\n%%EOF",
		"%PDF-1.4 a\n%%EOF\nupdate\n%%EOF\n":             "%PDF-1.4 a\n%%EOF\nupdate\n%%EOF\n",
		"%PDF-1.4 no marker":                             "%PDF-1.4 no marker",
	} {
		if got := string(pdfTrimAfterEOF([]byte(in))); got != want {
			t.Errorf("pdfTrimAfterEOF(%q) = %q, want %q", in, got, want)
		}
	}
}
