package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// maxServeRSSAfterJob is how far serve's resident memory may stay above
// its level before an upload once the upload's job has ended.
const maxServeRSSAfterJob = 32 << 20

// TestServeUploadBoundedMemory uploads each hostile file of
// writeHostileFormats that fits serve's upload limit (the zip-based ones,
// 1-2 MB each, and the 60 MB HTML paragraph and table) to a serve child, one job
// each. Each job reports the file failed with the bound it passed; serve's
// peak RSS stays under 300 MB, and once the job has ended its RSS is back
// within 32 MiB of its level before the upload (an EPUB chapter of 127 MiB
// took serve to 967 MiB and left it at 593 MiB; docs/serve.md).
func TestServeUploadBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve on 60 MB of uploads")
	}
	dir := t.TempDir()
	files := writeHostileFormats(t, dir, false)
	p := startServeProc(t, "--data", t.TempDir(), "--max-upload-mb", "100")
	pid := p.cmd.Process.Pid
	for _, c := range files {
		data, err := os.ReadFile(filepath.Join(dir, c.name))
		if err != nil {
			t.Fatal(err)
		}
		before, _ := procRSS(pid)
		id, err := p.upload(t, map[string]string{c.name: string(data)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		data = nil
		j := awaitFinished(t, p, []string{id}, 2*time.Minute)[id]
		rss, peak := procRSS(pid)
		t.Logf("%s: serve RSS %d MB before, peak %d MB, %d MB after the job", c.name, before>>20, peak>>20, rss>>20)
		if !strings.Contains(string(j.Result)+j.Error, c.want) {
			t.Errorf("%s: job %s lacks %q: %s %s", c.name, j.Status, c.want, j.Error, j.Result)
		}
		if peak > maxIndexRSS {
			t.Errorf("%s: serve's peak RSS %d MB, want <= %d MB", c.name, peak>>20, maxIndexRSS>>20)
		}
		if rss > before+maxServeRSSAfterJob {
			t.Errorf("%s: serve's RSS %d MB after the job, want <= %d MB (%d MB before)", c.name, rss>>20, (before+maxServeRSSAfterJob)>>20, before>>20)
		}
	}
}
