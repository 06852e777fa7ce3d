package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestSQLiteDecodeDocMatchesGenkit checks that sqliteDecodeDoc's direct
// path for text parts decodes every stored document exactly as decoding
// into ai.Document does, and that other part kinds still decode.
func TestSQLiteDecodeDocMatchesGenkit(t *testing.T) {
	meta := func() map[string]any {
		return map[string]any{MetaURL: "/a.html", MetaSource: "/a", "n": 3.5, "list": []any{"x", 1.0}, "nested": map[string]any{"k": true}, "nil": nil}
	}
	docs := []*ai.Document{
		ai.DocumentFromText("plain text \"quoted\" \\ \u00e9 \U0001F600\n", meta()),
		ai.DocumentFromText("", nil),
		{Content: []*ai.Part{ai.NewTextPart("one"), ai.NewTextPart("two")}, Metadata: map[string]any{}},
		{Content: []*ai.Part{{Kind: ai.PartText, Text: "with part metadata", Metadata: map[string]any{"p": "q"}}}},
		{Content: []*ai.Part{ai.NewMediaPart("image/png", "data:image/png;base64,AAAA")}, Metadata: meta()},
		{Content: []*ai.Part{ai.NewTextPart("text"), ai.NewDataPart(`{"a":1}`)}},
		{Content: []*ai.Part{ai.NewReasoningPart("thinking", nil)}},
		{Content: []*ai.Part{ai.NewCustomPart(map[string]any{"c": 1.0})}},
		{Content: []*ai.Part{ai.NewCustomPart(map[string]any{})}},
		{},
	}
	for i, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var want ai.Document
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if _, ok := want.Metadata[MetaURL].(string); ok {
			want.Metadata[MetaURL] = "/restored"
		}
		if _, ok := want.Metadata[MetaSource].(string); ok {
			want.Metadata[MetaSource] = "src"
		}
		got, err := sqliteDecodeDoc(b, "/restored", "src")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, &want) {
			gj, _ := json.Marshal(got)
			t.Errorf("document %d (%s): decoded %s, want %s", i, b, gj, b)
		}
	}
	if _, err := sqliteDecodeDoc([]byte(`{"content":`), "", ""); err == nil {
		t.Error("truncated JSON: no error")
	}
}

// TestSQLiteParseDocRefusesOddJSON checks that the direct decoder leaves
// to encoding/json what it might decode differently, and that
// sqliteDecodeDoc then still matches json.Unmarshal.
func TestSQLiteParseDocRefusesOddJSON(t *testing.T) {
	for _, raw := range []string{
		`{"Content":[{"text":"a"}]}`,
		`{"content":[null]}`,
		`{"content":[{"text":"a"}],"content":[{"text":"b"}]}`,
		`{"content":[{"text":"a\ud800"}]}`,
		"{\"content\":[{\"text\":\"a\xff\"}]}",
		`{"content":[{"text":"a","media":{"url":"x"}}]}`,
		`{"content":[{"text":null}]}`,
		`{"metadata":{"n":1e400}}`,
		`{"metadata":"x"}`,
		`{"metadata":{}} x`,
		`{"content":[{"text":"a"}],}`,
	} {
		if _, ok := sqliteParseDoc([]byte(raw)); ok {
			t.Errorf("%s: parsed directly, want the encoding/json fallback", raw)
		}
		var want ai.Document
		werr := json.Unmarshal([]byte(raw), &want)
		got, err := sqliteDecodeDoc([]byte(raw), "", "")
		if (err != nil) != (werr != nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", raw, err, werr)
		} else if err == nil && !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: decoded %+v, want %+v", raw, got, &want)
		}
	}
	for _, raw := range []string{
		`{"content":[{"text":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"}],"metadata":{"a":[1,-2.5e3,true,false,null,{"b":"c"}],"e":{}}}`,
		` { "content" : [ ] , "metadata" : null } `,
		`null`,
	} {
		got, ok := sqliteParseDoc([]byte(raw))
		var want ai.Document
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: parsed %+v (ok %v), want %+v", raw, got, ok, &want)
		}
	}
}

// FuzzSQLiteParseDoc checks that whatever the direct decoder accepts,
// json.Unmarshal decodes to the same document.
func FuzzSQLiteParseDoc(f *testing.F) {
	f.Add([]byte(`{"content":[{"text":"a\nb \u00e9"}],"metadata":{"url":"/x","n":[1,2,{"k":null}]}}`))
	f.Add([]byte(`{"content":[{"text":"x","metadata":{"p":true}}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := sqliteParseDoc(raw)
		if !ok {
			return
		}
		var want ai.Document
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%q: parsed directly, json.Unmarshal fails: %v", raw, err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("%q: parsed %+v, want %+v", raw, got, &want)
		}
	})
}
