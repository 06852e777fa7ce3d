package main

import (
	"errors"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// explainIndexError turns an indexing error into one reason, saying each
// thing once. A document the engine could not read carries a
// *DocumentError, whose Reason is that line ("encrypted PDF: a password is
// needed to open it"); the CLI adds a hint where it knows one. Other errors
// (the store, the embedder, the SSRF guard) are shown as they are.
func explainIndexError(err error) string {
	var de *askyourdocs.DocumentError
	switch {
	case errors.As(err, &de):
		if hint := ocrHint(); hint != "" && errors.Is(err, askyourdocs.ErrNoText) {
			return de.Reason + "; " + hint
		}
		return de.Reason
	case errors.Is(err, askyourdocs.ErrNoDocuments):
		return "no text found"
	case errors.Is(err, askyourdocs.ErrTooManyChunks):
		// IndexSource's limit, not a reader's: its numbers follow the
		// sentinel's words.
		_, detail, _ := strings.Cut(err.Error(), askyourdocs.ErrTooManyChunks.Error())
		return "too many chunks" + strings.TrimRight(detail, " ") + "; split the document or raise --max-chunks"
	case diskFull(err):
		return "the index's disk is full; nothing of this file was written (free space and index again)"
	case errors.Is(err, askyourdocs.ErrPrivateTarget):
		// Crawl errors reach the CLI as text (CrawlResult.Errors); the
		// address is what follows the sentinel's words.
		_, detail, _ := strings.Cut(err.Error(), askyourdocs.ErrPrivateTarget.Error())
		if detail = strings.TrimSpace(strings.TrimPrefix(detail, ":")); detail == "" {
			detail = askyourdocs.ErrPrivateTarget.Error()
		}
		return "refused by the SSRF guard: " + detail + "; pass --allow-private to index local or intranet sites you trust"
	}
	return err.Error()
}

// diskFull reports whether err says the store ran out of disk space: the
// operating system's ENOSPC, SQLite's SQLITE_FULL or PostgreSQL's
// disk_full (SQLSTATE 53100).
func diskFull(err error) bool {
	var se *sqlite.Error
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return true
	case errors.As(err, &se):
		return se.Code()&0xff == sqlite3.SQLITE_FULL
	case errors.As(err, &pe):
		return pe.Code == "53100"
	}
	return false
}
