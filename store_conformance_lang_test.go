package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// langTestCorpora are small manuals in Japanese, Simplified Chinese and
// German: each sentence is one chunk of its own page, and the queries name
// a phrase that stands inside exactly one of them (want: that page),
// often inside a longer run of characters with no space around it.
var langTestCorpora = []struct {
	name      string
	filler    string // a sentence holding no query's words
	sentences []string
	queries   map[string]int // query -> index of the sentence holding it
}{
	{
		name:   "ja",
		filler: "詳しくは次の節を参照してください。",
		sentences: []string{
			"この章では試験の準備について説明します。受験者数を入力してから、試験問題用紙を印刷してください。",
			"採点の前に、答案用紙をスキャナーで読み込みます。画像の解像度は300dpi以上を推奨します。",
			"数値的な限界として、一つの試験につき問題数は最大で200問です。",
			"PostgreSQLの設定ではmax_log_file_sizeを変更してからサーバーを再起動します。",
			"学生の名簿はCSVファイルから読み込むことができます。列の区切りはカンマです。",
			"成績は表計算ソフト用のファイルに書き出せます。ＯＤＳ形式とＣＳＶ形式に対応しています。",
			"ﾌｫﾝﾄの設定を変えると、印刷した用紙の見た目が変わります。",
			"問題の順番は受験者ごとに並べ替えることができます。",
		},
		queries: map[string]int{
			"受験者数": 0, "試験問題用紙を印刷": 0, "答案用紙": 1, "数値的な限界": 2,
			"max_log_file_size": 3, "PostgreSQL 設定": 3, "CSV 名簿": 4, "ODS形式": 5,
			"フォント": 6, "並べ替え": 7,
		},
	},
	{
		name:   "zh",
		filler: "更多内容请参阅下一节。",
		sentences: []string{
			"本章介绍如何安装软件包。使用包管理器可以自动解决依赖关系。",
			"配置文件位于系统目录中，修改后需要重新启动服务。",
			"网络接口的地址可以通过命令行工具查看和修改。",
			"备份数据之前，请确认磁盘上有足够的剩余空间。",
			"用户账户的密码应当定期更换，并且不要与他人共享。",
			"日志文件记录了系统运行时发生的错误和警告信息。",
			"防火墙规则决定了哪些网络连接被允许或者被拒绝。",
			"定时任务可以在指定的时间自动执行脚本。",
		},
		queries: map[string]int{
			"依赖关系": 0, "配置文件": 1, "网络接口": 2, "剩余空间": 3, "密码": 4,
			"警告信息": 5, "防火墙规则": 6, "定时任务": 7, "包管理器": 0,
		},
	},
	{
		name:   "de",
		filler: "Weitere Hinweise folgen im nächsten Abschnitt.",
		sentences: []string{
			"Dieses Kapitel beschreibt die Installation der Pakete mit der Paketverwaltung.",
			"Die Konfigurationsdatei liegt im Verzeichnis /etc und wird beim Start gelesen.",
			"Netzwerkschnittstellen werden mit dem Befehl ip angezeigt und geändert.",
			"Vor der Datensicherung sollte genügend freier Speicherplatz vorhanden sein.",
			"Passwörter der Benutzerkonten sollten regelmäßig geändert werden.",
			"Die Protokolldateien enthalten Fehler und Warnungen des laufenden Systems.",
			"Die Firewall-Regeln legen fest, welche Verbindungen erlaubt sind.",
			"Geplante Aufgaben führen Skripte zu festgelegten Zeiten automatisch aus.",
		},
		queries: map[string]int{
			"Paketverwaltung": 0, "Konfigurationsdatei": 1, "Netzwerkschnittstellen": 2,
			"freier Speicherplatz": 3, "Passwörter": 4, "Protokolldateien": 5,
			"Firewall-Regeln": 6, "geplante Aufgaben": 7,
		},
	},
}

// langTestDocs returns a corpus's chunks: each sentence on a page of its
// own, followed by 0 to 2 filler sentences so that the pages differ in
// length.
func langTestDocs(filler string, sentences []string) []*ai.Document {
	var docs []*ai.Document
	for i, s := range sentences {
		text := s
		for range i % 3 {
			text += " " + filler
		}
		docs = append(docs, ai.DocumentFromText(text, map[string]any{
			MetaURL: fmt.Sprintf("https://docs.example/page%d", i), MetaSource: "manual",
		}))
	}
	return docs
}

// TestStoreConformanceLanguages: a Japanese, a Chinese and a German corpus
// give the same keyword top 10 on all three stores (and the same fusion
// order of the hits the keyword list found), and each query (a phrase
// inside a longer run of CJK characters, a mixed Latin and CJK query,
// full-width and half-width forms, a German compound) finds its page first
// in keyword mode and in fusion.
func TestStoreConformanceLanguages(t *testing.T) {
	for _, c := range langTestCorpora {
		t.Run(c.name, func(t *testing.T) {
			queries := make([]string, 0, len(c.queries))
			for q := range c.queries {
				queries = append(queries, q)
			}
			slices.Sort(queries)
			got := map[string][][]string{}
			for _, name := range []string{"localvec", "sqlite", "pgvector"} {
				t.Run(name, func(t *testing.T) {
					s := indexedTestStore(t, name, NewLocalEmbedder(256), 256, langTestDocs(c.filler, c.sentences))
					var lists [][]string
					for _, q := range queries {
						want := fmt.Sprintf("https://docs.example/page%d", c.queries[q])
						for _, mode := range []SearchMode{SearchModeKeyword, SearchModeFusion} {
							hits, err := searchHits(Search(t.Context(), s, q, &SearchOptions{Mode: mode}))
							if err != nil {
								t.Fatal(err)
							}
							if len(hits) == 0 || hits[0].URL != want {
								var urls []string
								for _, h := range hits {
									urls = append(urls, strings.TrimPrefix(h.URL, "https://docs.example/"))
								}
								t.Errorf("%s %q: first hits %v, want %s first", mode, q, urls, want)
								continue
							}
							// The keyword list whole, and the fusion's hits that the
							// keyword list holds: the hits only the vector list has
							// tie within float rounding on a corpus this small,
							// which PostgreSQL computes in float4.
							kept := slices.DeleteFunc(slices.Clone(hits), func(h SearchHit) bool { return h.TextRank == 0 })
							lists = append(lists, tieGroups(kept))
						}
					}
					got[name] = lists
				})
			}
			ref := got["sqlite"]
			for name, lists := range got {
				if len(lists) != len(ref) {
					continue // failed above
				}
				for i, l := range lists {
					if !slices.Equal(l, ref[i]) {
						t.Errorf("%s, query %d: the top 10 differs from sqlite's:\n%s\n%s", name, i, strings.Join(l, "\n"), strings.Join(ref[i], "\n"))
					}
				}
			}
		})
	}
}
