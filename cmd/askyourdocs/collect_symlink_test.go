package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// symlinkTree is a shared folder with links out of it, as an attacker who
// may write to the folder but not read the secrets would lay it out:
// shared/notes.txt -> private/secret.txt, shared/outdir -> private/dir,
// shared/env.txt -> /proc/self/environ, and shared/inside.md -> a file
// inside shared (which is indexed).
type symlinkTree struct {
	shared, private string
}

func newSymlinkTree(t *testing.T) symlinkTree {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	root := t.TempDir()
	tr := symlinkTree{shared: filepath.Join(root, "shared"), private: filepath.Join(root, "private")}
	for _, d := range []string{tr.shared, filepath.Join(tr.shared, "real"), filepath.Join(tr.private, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(tr.shared, "real", "public.md"), "# Ferry\n\nThe ferry to the island leaves at nine every morning from pier four.\n")
	write(filepath.Join(tr.private, "secret.txt"), "db_password = hunter2-zebra-quartz\n")
	write(filepath.Join(tr.private, "dir", "keys.md"), "# Keys\n\nThe vault passphrase is orchid-lantern-seven.\n")
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(tr.shared, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(tr.private, "secret.txt"), "notes.txt")
	link(filepath.Join(tr.private, "dir"), "outdir")
	link("/proc/self/environ", "env.txt")
	link(filepath.Join("real", "public.md"), "inside.md")
	return tr
}

// TestIndexSymlinkFlag: the index command leaves the outside targets out
// and says so on its Skipped line; --follow-symlinks-outside indexes them.
// (The walk's rules themselves: TestIndexFolderSymlinksStayInside.)
func TestIndexSymlinkFlag(t *testing.T) {
	tr := newSymlinkTree(t)
	ctx := context.Background()
	for _, tc := range []struct {
		args   []string
		secret bool
	}{{nil, false}, {[]string{"--follow-symlinks-outside"}, true}} {
		data := filepath.Join(t.TempDir(), "idx")
		var out, errb bytes.Buffer
		args := append([]string{"--data", data, "index"}, tc.args...)
		if code := run(ctx, append(args, tr.shared), nil, &out, &errb); code != exitOK {
			t.Fatalf("index %v: %d\n%s\n%s", tc.args, code, out.String(), errb.String())
		}
		if !tc.secret && (!strings.Contains(out.String(), "symlink out of folder 2") || !strings.Contains(out.String(), "special filesystem 1")) {
			t.Errorf("index: the Skipped line does not count the links:\n%s", out.String())
		}
		out.Reset()
		if code := run(ctx, []string{"--data", data, "--json", "search", "db_password"}, nil, &out, &errb); code != exitOK {
			t.Fatalf("search: %d %s", code, errb.String())
		}
		if got := strings.Contains(out.String(), "hunter2"); got != tc.secret {
			t.Errorf("index %v: secret found = %v, want %v\n%s", tc.args, got, tc.secret, out.String())
		}
		if strings.Contains(out.String(), "AWS_") || strings.Contains(out.String(), "PATH=") {
			t.Errorf("index %v: the process environment is searchable", tc.args)
		}
	}
}

// TestServeSymlinkedSecrets: with a password set, an anonymous asker of a
// folder laid out by an attacker gets nothing of what the links point to
// (file, folder, /proc/self/environ).
func TestServeSymlinkedSecrets(t *testing.T) {
	tr := newSymlinkTree(t)
	t.Setenv("ASKYOURDOCS_SYMLINK_TEST_SECRET", "envsecret-marigold-ninety")
	ts := newTestServe(t, nil, "pw-symlink-test", 0)
	if rep, err := ts.s.runIndex(context.Background(), indexInput{Paths: []string{tr.shared}}, func(string) {}); err != nil || rep.Sources != 1 {
		t.Fatalf("index: %v %+v", err, rep)
	}
	for _, q := range []string{"db_password", "vault passphrase", "ASKYOURDOCS_SYMLINK_TEST_SECRET", "ferry island pier"} {
		body, _ := json.Marshal(askInput{Question: q})
		_, got := ts.request(t, nil, "POST", "/api/ask", "application/json", body, map[string]string{"X-Requested-With": "test"})
		for _, secret := range []string{"hunter2", "orchid-lantern", "marigold"} {
			if strings.Contains(got, secret) {
				t.Errorf("ask %q answers the linked secret %q: %s", q, secret, got)
			}
		}
		if q == "ferry island pier" && !strings.Contains(got, "pier four") {
			t.Errorf("ask %q: the folder's own file is not found: %s", q, got)
		}
	}
}

// TestServeFilesIdentity: /files and /view serve an indexed file only
// while it is the file that was indexed: one swapped for a symlink to a
// file out of the folder, or to /proc/self/environ, gets 404, and so does
// one whose content changed (for /files; /view shows the indexed passage).
func TestServeFilesIdentity(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "docs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "guide.md")
	secret := filepath.Join(root, "secret.md")
	for f, s := range map[string]string{
		p:      "# Guide\n\nThe lighthouse opens at ten and closes at dusk.\n",
		secret: "# Secret\n\nroot password is anemone-4711\n",
	} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := newTestServe(t, nil, "", 0)
	if rep, err := ts.s.runIndex(context.Background(), indexInput{Paths: []string{dir}}, func(string) {}); err != nil || rep.Sources != 1 {
		t.Fatalf("index: %v %+v", err, rep)
	}
	files := "/files?url=" + url.QueryEscape(p)
	out := ts.askJSON(t, askInput{Question: "When does the lighthouse open?"})
	if len(out.Citations) == 0 {
		t.Fatal("no citation")
	}
	view := strings.TrimSuffix(out.Citations[0].URL, "#passage")
	get := func(path string) (int, string) {
		resp, body := ts.request(t, nil, "GET", path, "", nil, nil)
		return resp.StatusCode, body
	}
	if code, body := get(files); code != http.StatusOK || !strings.Contains(body, "lighthouse") {
		t.Fatalf("indexed file: %d %s", code, body)
	}
	swap := func(target string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, target := range []string{secret, "/proc/self/environ"} {
		swap(target)
		if code, body := get(files); code != http.StatusNotFound || strings.Contains(body, "anemone") {
			t.Errorf("/files after swap to %s: %d %s", target, code, body)
		}
		if code, body := get(view); code != http.StatusNotFound || strings.Contains(body, "anemone") {
			t.Errorf("/view after swap to %s: %d %s", target, code, body)
		}
	}
	// Replaced in place with other content (another size): /files refuses,
	// /view shows the passage as indexed.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("# Guide\n\nRewritten entirely, and longer than before.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := get(files); code != http.StatusNotFound {
		t.Errorf("/files of a changed file: %d %s", code, body)
	}
	if code, body := get(view); code != http.StatusOK || !strings.Contains(body, "lighthouse opens at ten") {
		t.Errorf("/view of a changed file: %d %s", code, body)
	}
}
