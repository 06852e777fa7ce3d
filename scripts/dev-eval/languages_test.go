package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestManDescription reads the NAME line's description of rendered man
// pages: wrapped lines joined (CJK without a space), " - " or " — " as the
// separator, "" without one.
func TestManDescription(t *testing.T) {
	cases := []struct{ text, want string }{
		{"LS(1)    User Commands    LS(1)\n\nNAME\n       ls - list directory contents\n\nSYNOPSIS\n       ls [OPTION]...\n", "list directory contents"},
		{"X(1)   Y   X(1)\n\n名前\n       acleandir  - netatalk の Apple Macintosh ファイルが含まれているディレク\n       トリを掃除する。\n\n書式\n", "netatalk の Apple Macintosh ファイルが含まれているディレクトリを掃除する。"},
		{"X(5)\n\nNOM\n       bootparams — base de données\n       des paramètres\n\nSYNOPSIS\n", "base de données des paramètres"},
		{"X(1)\n\nNAME\n       frobnicate\n\nDESCRIPTION\n", ""},
		{"X(1)\n\nNAME\n       x - ab\n", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := manDescription(c.text); got != c.want {
			t.Errorf("manDescription(%.30q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestLOIndexEntries keeps the translated entries of LibreOffice help's
// keyword index with their pages (language folder, query and fragment
// cut) and leaves the untranslated ones out.
func TestLOIndexEntries(t *testing.T) {
	dir := t.TempDir()
	js := `var bookmarks = [
{url:"ja/text/swriter/guide/calculate.html?DbPAR=WRITER#bm_id3149909", app:"WRITER", text:"= -- in Writer tables"},
{url:"ja/text/swriter/guide/table_insert.html?DbPAR=WRITER#bm_id3156377", app:"WRITER", text:"DDE --  表を挿入する"},
{url:"ja/text/shared/01/x.html?DbPAR=SHARED#bm_1", app:"SHARED", text:"&quot;引用&quot; -- 記号"},
];`
	if err := os.WriteFile(filepath.Join(dir, "bookmarks.js"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := loIndexEntries(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"DDE 表を挿入する", "text/swriter/guide/table_insert.html"}, {`"引用" 記号`, "text/shared/01/x.html"}}
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// TestManDropDescription cuts the NAME line's description, wrapped or
// not, and keeps the names and the rest of the page; a page without a
// separator is left as it is.
func TestManDropDescription(t *testing.T) {
	cases := []struct{ text, want string }{
		{"LS(1)    User Commands    LS(1)\n\nNAME\n       ls - list directory contents\n\nSYNOPSIS\n       ls [OPTION]...\n",
			"LS(1)    User Commands    LS(1)\n\nNAME\n       ls\n\nSYNOPSIS\n       ls [OPTION]...\n"},
		{"X(3)\n\nNAME\n       EVP_DigestInit, EVP_DigestUpdate - EVP\n       digest routines\n\nSYNOPSIS\n",
			"X(3)\n\nNAME\n       EVP_DigestInit, EVP_DigestUpdate\n\nSYNOPSIS\n"},
		{"X(1)\n\nNAME\n       frobnicate\n\nDESCRIPTION\n", "X(1)\n\nNAME\n       frobnicate\n\nDESCRIPTION\n"},
		{"", ""},
	}
	for _, c := range cases {
		got := manDropDescription(c.text)
		if got != c.want {
			t.Errorf("manDropDescription(%.30q) = %q, want %q", c.text, got, c.want)
		}
		if manDescription(got) != "" {
			t.Errorf("manDropDescription(%.30q) left a description %q", c.text, manDescription(got))
		}
	}
}
