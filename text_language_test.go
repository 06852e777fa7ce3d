package engine

import (
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestDetectLanguage checks the script rule for Chinese, Japanese and
// Korean, the trigram detector for languages written with spaces, and ""
// for text too short or mixed to tell.
func TestDetectLanguage(t *testing.T) {
	cases := []struct{ text, want string }{
		{"The configuration file is read once at startup; changes need a restart of the server.", "en"},
		{"Die Konfigurationsdatei wird beim Start einmal gelesen; Änderungen erfordern einen Neustart des Servers.", "de"},
		{"Le fichier de configuration est lu une seule fois au démarrage ; les modifications exigent un redémarrage du serveur.", "fr"},
		{"El archivo de configuración se lee una vez al inicio; los cambios requieren reiniciar el servidor.", "es"},
		{"設定ファイルは起動時に一度だけ読み込まれます。変更を反映するにはサーバーを再起動してください。", "ja"},
		{"配置文件在启动时读取一次；更改配置后需要重新启动服务器。", "zh"},
		{"設定檔在啟動時讀取一次；變更後需要重新啟動伺服器。", "zh"},
		{"설정 파일은 시작할 때 한 번 읽힙니다. 변경하려면 서버를 다시 시작하십시오.", "ko"},
		// English identifiers inside a Japanese sentence: still Japanese.
		{"max_log_file_size を変更すると、ログファイルの最大サイズが変わります。", "ja"},
		{"ok", ""},
		{"12345 67890 -- ++ //", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := detectLanguage(c.text); got != c.want {
			t.Errorf("detectLanguage(%.40q) = %q, want %q", c.text, got, c.want)
		}
	}
	// Only the sample is read: English text followed by a long German
	// tail is English.
	long := strings.Repeat("The server reads the configuration file once when it starts. ", 40) +
		strings.Repeat("Der Server liest die Konfigurationsdatei einmal beim Start. ", 200)
	if got := detectLanguage(long); got != "en" {
		t.Errorf("long text: %q, want en (its first %d bytes)", got, languageSampleBytes)
	}
}

// TestAnnotateLanguages checks that IndexSource's annotation gives every
// chunk its document's language, a CJK chunk in a Latin document its own,
// a chunk too short to tell its document's, and keeps a language the
// source set.
func TestAnnotateLanguages(t *testing.T) {
	doc := func(url, text string, meta map[string]any) *ai.Document {
		if meta == nil {
			meta = map[string]any{}
		}
		meta[MetaURL] = url
		return ai.DocumentFromText(text, meta)
	}
	de := "Die Konfigurationsdatei wird beim Start einmal gelesen; Änderungen erfordern einen Neustart des Servers."
	docs := []*ai.Document{
		doc("a.html", de+" "+de+" "+de, nil),
		doc("a.html", "Siehe auch", nil),
		doc("a.html", "設定ファイルは起動時に一度だけ読み込まれます。変更を反映するにはサーバーを再起動してください。", nil),
		doc("b.html", "The configuration file is read once at startup; changes need a restart of the server.", nil),
		doc("c.html", de, map[string]any{metaLanguage: "en"}),
		doc("d.html", "x", nil),
		nil,
	}
	annotateLanguages(docs)
	want := []string{"de", "de", "ja", "en", "en", ""}
	for i, w := range want {
		if got := metaString(docs[i].Metadata, metaLanguage); got != w {
			t.Errorf("chunk %d: language %q, want %q", i, got, w)
		}
	}
	if _, ok := docs[5].Metadata[metaLanguage]; ok {
		t.Error("a chunk whose language cannot be told got the key")
	}
}

// FuzzDetectLanguage: any text, valid UTF-8 or not, gives a code of two
// letters or "" and never panics.
func FuzzDetectLanguage(f *testing.F) {
	f.Add("The configuration file is read once at startup.")
	f.Add("設定ファイルは起動時に一度だけ読み込まれます。")
	f.Add("\xff\xfe\x00abc")
	f.Fuzz(func(t *testing.T, text string) {
		got := detectLanguage(text)
		if got != "" && len(got) != 2 {
			t.Fatalf("detectLanguage = %q", got)
		}
		annotateLanguages([]*ai.Document{ai.DocumentFromText(text, nil)})
	})
}

// BenchmarkAnnotateLanguages measures IndexSource's language annotation
// per chunk for a manual of 40 documents of 25 chunks each: English, and
// Japanese with an English chunk in every document (each such chunk gets
// its own detection). Compare ns/chunk with the index's cost per chunk
// (BenchmarkIndexSource...).
func BenchmarkAnnotateLanguages(b *testing.B) {
	en := strings.Repeat("The configuration file is read once at startup; changes need a restart of the server. ", 14)
	ja := strings.Repeat("設定ファイルは起動時に一度だけ読み込まれます。変更を反映するにはサーバーを再起動してください。", 9)
	for _, c := range []struct{ name, main string }{{"en", en}, {"ja", ja}} {
		b.Run(c.name, func(b *testing.B) {
			const docsN, chunksN = 40, 25
			for b.Loop() {
				b.StopTimer()
				docs := make([]*ai.Document, 0, docsN*chunksN)
				for d := range docsN {
					for k := range chunksN {
						text := c.main
						if k == chunksN-1 {
							text = en
						}
						docs = append(docs, ai.DocumentFromText(text, map[string]any{MetaURL: "doc" + strings.Repeat("x", d)}))
					}
				}
				b.StartTimer()
				annotateLanguages(docs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*docsN*chunksN), "ns/chunk")
		})
	}
}
