package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
)

// crawlCacheFileName returns the cache file name for a page URL: host and
// path reduced to [a-z0-9_-], at most 80 characters, plus a hash of the full
// URL so distinct URLs never share a file. The name has no separators, no
// leading dot and is never a reserved device name on Windows, so it stays
// inside the cache directory on every OS.
func crawlCacheFileName(pageURL string) string {
	slug := pageURL
	if u, err := url.Parse(pageURL); err == nil && u.Host != "" {
		slug = u.Host + u.EscapedPath()
		if u.RawQuery != "" {
			slug += "_" + u.RawQuery
		}
	}
	var b strings.Builder
	lastSep := true
	for _, r := range strings.ToLower(slug) {
		// No dots: the only dot is the extension's, so no name starts with
		// a Windows device name followed by a dot ("con.example.com").
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-'
		if ok {
			b.WriteRune(r)
			lastSep = false
		} else if !lastSep {
			b.WriteByte('_')
			lastSep = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	sum := sha256.Sum256([]byte(pageURL))
	name := strings.Trim(b.String(), "_-")
	if name == "" {
		name = "page"
	}
	return name + "-" + hex.EncodeToString(sum[:6]) + crawlCacheExt
}

// writeCrawlCachePage writes one cleaned page to the cache directory root
// (atomically: temporary file, fsync, rename) and returns the file name.
func writeCrawlCachePage(root *os.Root, pageURL string, paras []Paragraph) (string, error) {
	name := crawlCacheFileName(pageURL)
	tmp := "." + name + ".tmp-" + NewRandomHexID(4)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("save crawl page %s: %w", pageURL, err)
	}
	_, werr := f.Write(renderCrawlMarkdown(pageURL, paras))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, name)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("save crawl page %s to %s: %w", pageURL, name, werr)
	}
	return name, nil
}

// ReindexCrawlData replays the Markdown cache a RunCrawl with
// SAVE_CRAWL_DATA=1 wrote to dir: it reads every *.md file under dir (in
// name order, subdirectories included) and calls indexPage with the page's
// URL and paragraphs, the same paragraphs (text, headings, breadcrumbs) the
// live crawl passed. Nothing is fetched. Use it when a chunking fix or a
// changed chunk size should reach an already-crawled site.
//
// Files that cannot be used are skipped and reported in the result's Errors,
// and the replay goes on: files that are not crawl Markdown (errors wrap
// ErrCrawlCacheFormat), files larger than 32 MiB, symbolic links and other
// non-regular files, files that would resolve outside dir, and a second file
// for a URL already replayed. indexPage errors are reported the same way.
// FilesProcessed counts the cache files tried, usable or not
// (docs/compat.md); PagesIndexed the indexPage calls that
// succeeded. progress gets one line per usable file, none for a skipped one.
//
// The returned error is non-nil only when dir cannot be read at all or ctx
// ends; the result then holds what was done so far.
func ReindexCrawlData(ctx context.Context, dir string, indexPage IndexPageFunc, progress func(string)) (ReindexResult, error) {
	var res ReindexResult
	if indexPage == nil {
		return res, fmt.Errorf("reindex crawl data: %w: indexPage is nil", ErrInvalidCrawlInput)
	}
	if progress == nil {
		progress = func(string) {}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return res, fmt.Errorf("reindex crawl data: %w", err)
	}
	defer root.Close()

	var files []string
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", name, err))
			return nil
		}
		if d.IsDir() {
			if name != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(path.Ext(name), crawlCacheExt) || strings.HasPrefix(d.Name(), ".") {
			return nil // not a cache file (temporary files start with a dot)
		}
		if !d.Type().IsRegular() {
			res.FilesProcessed++
			res.Errors = append(res.Errors, fmt.Sprintf("%s: skipped: not a regular file (%s)", name, d.Type()))
			return nil
		}
		files = append(files, name)
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("reindex crawl data: list %s: %w", dir, err)
	}
	slices.Sort(files)

	seen := make(map[string]string)
	for i, name := range files {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("reindex crawl data: %w", err)
		}
		res.FilesProcessed++
		pageURL, paras, err := readCrawlCacheFile(root, name)
		if err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("%s: skipped: %v", name, err))
			continue
		}
		if prev, dup := seen[pageURL]; dup {
			res.Errors = append(res.Errors, fmt.Sprintf("%s: skipped: %s was already replayed from %s", name, pageURL, prev))
			continue
		}
		seen[pageURL] = name
		if len(paras) == 0 {
			progress(fmt.Sprintf("file %d/%d: %s: no paragraphs", i+1, len(files), pageURL))
			continue
		}
		n, err := indexPage(ctx, pageURL, paras)
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("reindex crawl data: %s: %w", pageURL, err)
			}
			res.Errors = append(res.Errors, fmt.Sprintf("%s: index: %v", pageURL, err))
			progress(fmt.Sprintf("file %d/%d: %s: index failed: %v", i+1, len(files), pageURL, err))
			continue
		}
		res.PagesIndexed++
		progress(fmt.Sprintf("file %d/%d: %s (%d chunks)", i+1, len(files), pageURL, n))
	}
	slog.InfoContext(ctx, "crawl cache replayed", "dir", dir, "files", res.FilesProcessed, "pages", res.PagesIndexed, "errors", len(res.Errors))
	return res, nil
}

// readCrawlCacheFile reads and parses one cache file inside root.
func readCrawlCacheFile(root *os.Root, name string) (string, []Paragraph, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return "", nil, err
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := root.Open(name)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(bufio.NewReader(f), crawlCacheMaxFileBytes+1))
	if err != nil {
		return "", nil, err
	}
	if len(data) > crawlCacheMaxFileBytes {
		return "", nil, fmt.Errorf("file larger than %d MiB", crawlCacheMaxFileBytes>>20)
	}
	return parseCrawlMarkdown(data)
}
