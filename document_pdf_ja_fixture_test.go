package engine

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateJAFixture = flag.Bool("update-ja", false, "rewrite testdata/cli/ja/shiken-manual.pdf")

// jaManualPages is a 12-page Japanese manual for an exam tool, written for
// the tests: page 10 holds 受験者数 and 試験問題用紙を印刷 inside longer
// sentences; the other pages use the same words apart (受験者, 試験,
// 問題, 用紙, 印刷), as a real manual does.
var jaManualPages = [][2]string{
	{"はじめに", "このマニュアルでは、試験の作成から採点までの流れを説明します。最初に必要なソフトウェアを導入してください。"},
	{"インストール", "パッケージ管理ツールでソフトウェアを導入します。導入後に設定ファイルを確認してください。"},
	{"新しいプロジェクト", "プロジェクトを作成すると、試験ごとにフォルダーが用意されます。フォルダーの名前は後から変更できます。"},
	{"問題の作成", "問題は専用の書式で記述します。選択肢の順番は自動的に並べ替えることができます。"},
	{"レイアウト", "用紙の大きさと余白を指定します。フォントの大きさは本文と見出しで別々に設定できます。"},
	{"受験者の名簿", "受験者の名簿は表計算ソフトで作成したファイルから読み込みます。名簿には学籍番号と氏名が必要です。"},
	{"印刷の設定", "プリンターの種類に合わせて印刷の品質を選びます。両面印刷を使う場合は用紙の向きに注意してください。"},
	{"答案の読み込み", "採点の前に、記入済みの答案をスキャナーで読み込みます。画像の解像度は高い方が正確です。"},
	{"数値的な限界", "一つの試験に含められる問題の数には上限があります。大きな試験は複数に分けてください。"},
	{"試験の準備", "試験の準備では、まず受験者数を入力してから、人数分の試験問題用紙を印刷してください。予備の用紙も数枚用意すると安心です。"},
	{"採点", "読み込んだ答案は自動的に採点されます。採点の基準は問題ごとに変更できます。"},
	{"成績の書き出し", "成績は表計算ソフト用のファイルに書き出せます。書き出した成績は受験者に通知できます。"},
}

// jaManualFiller pads every page to the length of a real manual's page
// (about 600 characters), so that a page is a chunk of its own; it holds
// none of the words the tests search.
const jaManualFiller = "補足として関連する項目も確認しておくと作業が円滑に進みます。"

// jaManualPDF builds the manual: each page a heading (16 pt) and its body
// (11 pt, padded with jaManualFiller) broken into lines of 24 characters,
// in a Type0 font with a ToUnicode map.
func jaManualPDF() []byte {
	d := newPDFTestDoc()
	var all []string
	for _, p := range jaManualPages {
		all = append(all, p[0], p[1])
	}
	all = append(all, jaManualFiller+"0123456789")
	show := pdfTestCJKFont(d, "J", all...)
	for i, p := range jaManualPages {
		var c strings.Builder
		fmt.Fprintf(&c, "BT /J 16 Tf 72 760 Td %s Tj ET\n", show(p[0]))
		body := []rune(p[1] + strings.Repeat(fmt.Sprintf("%d%s", i+1, jaManualFiller), 20))
		y := 730.0
		for len(body) > 0 {
			n := min(24, len(body))
			fmt.Fprintf(&c, "BT /J 11 Tf 72 %g Td %s Tj ET\n", y, show(string(body[:n])))
			body, y = body[n:], y-15
		}
		d.page(c.String())
	}
	return d.bytes()
}

// TestJapaneseManualFixture keeps testdata/cli/ja/shiken-manual.pdf (the
// CLI's Japanese search test reads it) the output of jaManualPDF, and
// checks that its page 10 reads back whole.
func TestJapaneseManualFixture(t *testing.T) {
	path := filepath.Join("testdata", "cli", "ja", "shiken-manual.pdf")
	data := jaManualPDF()
	if *updateJAFixture {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, data) {
		t.Fatalf("%s is not jaManualPDF's output: go test -run TestJapaneseManualFixture -update-ja", path)
	}
	paras, err := extractPDFBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var page10 []string
	for _, p := range paras {
		if p.PageNum == 10 {
			page10 = append(page10, p.Text)
		}
	}
	if got := strings.Join(page10, "\n"); !strings.Contains(got, jaManualPages[9][1]) {
		t.Errorf("page 10 reads %q, want its body whole", got)
	}
}
