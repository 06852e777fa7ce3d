package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// crawlPagesTable keeps, per crawled page, what the last crawl learnt
// about it (askyourdocs.CrawlPage: validators, links, paragraph
// fingerprints), so that the next crawl of its source revalidates
// instead of fetching and extracting every page again. It lives in the
// store's own database, beside the index it describes.
const crawlPagesTable = "askyourdocs_crawl_pages"

// crawlPageRow is one page's record: the crawl source it belongs to, the
// chunking it was indexed with (a page indexed with other chunk sizes is
// read again) and its state as JSON.
type crawlPageRow struct {
	URL, Source, Chunking string
	State                 []byte
}

// saveCrawlPages records rows (replacing a page's earlier record) and
// forgets gone.
func (s *sqliteStore) saveCrawlPages(ctx context.Context, rows []crawlPageRow, gone []string) error {
	db := s.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+crawlPagesTable+
		` (url TEXT PRIMARY KEY, source TEXT NOT NULL, chunking TEXT NOT NULL, state TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("crawl pages: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("crawl pages: %w", err)
	}
	defer tx.Rollback()
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+crawlPagesTable+` (url, source, chunking, state) VALUES (?, ?, ?, ?)
			ON CONFLICT (url) DO UPDATE SET source = excluded.source, chunking = excluded.chunking, state = excluded.state`,
			r.URL, r.Source, r.Chunking, string(r.State)); err != nil {
			return fmt.Errorf("crawl pages: %w", err)
		}
	}
	for _, u := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+crawlPagesTable+` WHERE url = ?`, u); err != nil {
			return fmt.Errorf("crawl pages: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("crawl pages: %w", err)
	}
	return nil
}

// loadCrawlPages returns the records of source's pages (none before its
// first crawl that kept them).
func (s *sqliteStore) loadCrawlPages(ctx context.Context, source string) ([]crawlPageRow, error) {
	rows, err := s.DB().QueryContext(ctx, `SELECT url, chunking, state FROM `+crawlPagesTable+` WHERE source = ?`, source)
	if err != nil {
		return nil, nil // no table yet: nothing recorded
	}
	defer rows.Close()
	return scanCrawlPages(rows, source)
}

// saveCrawlPages is sqliteStore's, in the PostgreSQL database, per store
// name.
func (s *pgStore) saveCrawlPages(ctx context.Context, rows []crawlPageRow, gone []string) error {
	if _, err := s.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+crawlPagesTable+
		` (name text NOT NULL, url text NOT NULL, source text NOT NULL, chunking text NOT NULL, state text NOT NULL, PRIMARY KEY (name, url))`); err != nil {
		return fmt.Errorf("crawl pages: %w", err)
	}
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("crawl pages: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, r := range rows {
		if _, err := tx.Exec(ctx, `INSERT INTO `+crawlPagesTable+` (name, url, source, chunking, state) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (name, url) DO UPDATE SET source = EXCLUDED.source, chunking = EXCLUDED.chunking, state = EXCLUDED.state`,
			s.name, r.URL, r.Source, r.Chunking, string(r.State)); err != nil {
			return fmt.Errorf("crawl pages: %w", err)
		}
	}
	for _, u := range gone {
		if _, err := tx.Exec(ctx, `DELETE FROM `+crawlPagesTable+` WHERE name = $1 AND url = $2`, s.name, u); err != nil {
			return fmt.Errorf("crawl pages: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("crawl pages: %w", err)
	}
	return nil
}

// loadCrawlPages is sqliteStore's, from the PostgreSQL database.
func (s *pgStore) loadCrawlPages(ctx context.Context, source string) ([]crawlPageRow, error) {
	rows, err := s.Pool.Query(ctx, `SELECT url, chunking, state FROM `+crawlPagesTable+` WHERE name = $1 AND source = $2`, s.name, source)
	if err != nil {
		return nil, nil // no table yet
	}
	defer rows.Close()
	return scanCrawlPages(rows, source)
}

// crawlPageRows are the rows of loadCrawlPages' query, from database/sql
// or pgx.
type crawlPageRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanCrawlPages reads (url, chunking, state) rows of source's pages.
func scanCrawlPages(rows crawlPageRows, source string) ([]crawlPageRow, error) {
	var out []crawlPageRow
	for rows.Next() {
		r := crawlPageRow{Source: source}
		var state string
		if err := rows.Scan(&r.URL, &r.Chunking, &state); err != nil {
			return nil, fmt.Errorf("crawl pages: %w", err)
		}
		r.State = []byte(state)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawl pages: %w", err)
	}
	return out, nil
}

// chunking names the chunk size and overlap pages are indexed with.
func (ix *indexer) chunking() string {
	return fmt.Sprintf("%d/%d", ix.chunkSize, ix.overlap)
}

// previousCrawl returns the pages an earlier crawl of source recorded
// that the next crawl may revalidate: indexed with today's chunking, and
// either still in the index or not meant to be indexed (noindex, a
// canonical or refresh stub). A page whose chunks are gone (deleted,
// failed) is read whole again. A store that cannot read them gives none:
// the crawl then reads every page, as before.
func (ix *indexer) previousCrawl(ctx context.Context, source string) []askyourdocs.CrawlPage {
	rows, err := ix.b.store.loadCrawlPages(ctx, source)
	if err != nil {
		ix.prog.note("reading every page again: " + err.Error())
		return nil
	}
	var out []askyourdocs.CrawlPage
	for _, r := range rows {
		if r.Chunking != ix.chunking() {
			continue
		}
		var p askyourdocs.CrawlPage
		if json.Unmarshal(r.State, &p) != nil || p.URL == "" {
			continue
		}
		final := crawledURL(p)
		stub := p.NoIndex || p.Refresh != "" || (p.Canonical != "" && strings.TrimSuffix(p.Canonical, "/") != strings.TrimSuffix(final, "/"))
		if ix.oldChunks[final] > 0 || stub {
			out = append(out, p)
		}
	}
	return out
}

// crawledURL is the URL a crawled page was indexed under: its final URL
// after redirects.
func crawledURL(p askyourdocs.CrawlPage) string {
	if p.Final != "" {
		return p.Final
	}
	return p.URL
}

// recordCrawl counts the crawl's unchanged pages as unchanged sources
// (checked now, not changed) and keeps its pages for the next crawl.
func (ix *indexer) recordCrawl(ctx context.Context, source string, res askyourdocs.CrawlResult) {
	rows := make([]crawlPageRow, 0, len(res.Pages))
	for _, p := range res.Pages {
		state, err := json.Marshal(p)
		if err != nil {
			continue
		}
		rows = append(rows, crawlPageRow{URL: p.URL, Source: source, Chunking: ix.chunking(), State: state})
		final := crawledURL(p)
		if n := ix.oldChunks[final]; p.NotModified && n > 0 {
			ix.rep.Sources++
			ix.rep.Chunks += n
			ix.rep.Unchanged++
			ix.checks = append(ix.checks, sourceCheckAt(final, time.Now(), false))
		}
	}
	if err := ix.b.store.saveCrawlPages(context.WithoutCancel(ctx), rows, ix.gone); err != nil {
		ix.prog.note("the crawl's pages were not kept (the next crawl reads every page again): " + err.Error())
	}
}
