package main

import "testing"

// TestLocalStoreOptions checks the embedded store's options: a command
// that asks once opens it without SQLite's memory map (its pages would
// stay resident for one query), every other keeps the default map, and
// name and language pass through.
func TestLocalStoreOptions(t *testing.T) {
	once := localStoreOptions("docs", "german", true)
	if once.MmapBytes >= 0 || once.Name != "docs" || once.KeywordLanguage != "german" {
		t.Errorf("once: %+v, want MmapBytes < 0, Name docs, KeywordLanguage german", *once)
	}
	if serving := localStoreOptions("docs", "", false); serving.MmapBytes != 0 {
		t.Errorf("serving: MmapBytes %d, want 0 (the default map)", serving.MmapBytes)
	}
}
