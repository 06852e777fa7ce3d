package engine

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A PgvecStore of schema version 4 ranks keyword searches with the same
// BM25F score as LocalvecStore and SQLiteStore, from two tables kept next
// to the chunk table:
//
//   - <table>_kw (term, cid, tf, len, w): one row per distinct analyzer
//     term of a chunk (textAnalyzer of the store's text search
//     configuration, breadcrumb terms counted bm25HeadingWeight times), cid
//     being the chunk's ID as a uuid (the 32 hex digits of every ID the
//     store writes), tf the term's frequency, len the chunk's length in
//     terms and w the impact tf / (tf + k1(1-b) + k1 b len/pgvecImpactLen),
//     by which an index lists each term's postings best first (see
//     pgvecTopK); plus one row with the empty term and tf 0 per chunk.
//   - <table>_kwdf (term, df, len): document frequencies as deltas, one row
//     per term and write, summed when read and merged after writes
//     (compactTerms); the empty term's row carries the chunk count and
//     their summed length. Writers only append to it, so concurrent writers
//     never wait for each other there.
//
// The store writes a chunk's postings in the transaction that writes the
// chunk. Triggers keep the rest in step whichever statement changes the
// tables: deleting chunks deletes their postings, inserting or deleting
// postings appends the frequency deltas, truncating the chunk table
// empties both. A store whose configuration has no textAnalyzer (a custom
// configuration) writes no postings and ranks with the tsvector column.

// pgvecImpactLen is the reference chunk length (in terms) of the stored
// impact w. Search bounds hold for any average length; they are tightest
// when the average is near it (chunks of the default 1,200 characters
// have about 200 terms).
const pgvecImpactLen = 200

// pgvecTermBatch is the largest number of posting rows written with one
// multi-row INSERT statement.
const pgvecTermBatch = 20000

// pgvecTermColumns are the posting table's columns, in CopyFrom order.
var pgvecTermColumns = []string{"term", "cid", "tf", "len"}

// pgvecTerms is the analysed form of a chunk: its distinct terms with their
// frequencies and its length.
type pgvecTerms struct {
	terms []string
	tf    []int32
	len   int32
}

// pgvecChunkUUID returns the posting key of a chunk ID: the 16 bytes of its
// 32 hex digits, and false for an ID the store did not make (an app's own
// row), which gets no postings.
func pgvecChunkUUID(id string) ([16]byte, bool) {
	var u [16]byte
	if len(id) != 32 {
		return u, false
	}
	if _, err := hex.Decode(u[:], []byte(id)); err != nil {
		return u, false
	}
	return u, true
}

// pgvecCIDSQL returns the SQL expression of the posting key of the chunk
// ID expression id, as pgvecChunkUUID computes it in Go: the uuid of its
// 32 hex digits, NULL for an ID the store did not make.
func pgvecCIDSQL(id string) string {
	return `(CASE WHEN ` + id + ` ~ '^[0-9a-fA-F]{32}$' THEN ` + id + `::uuid END)`
}

// pgvecAnalyzer returns the textAnalyzer of a text search configuration,
// nil when there is none (a custom configuration).
func pgvecAnalyzer(config string) *textAnalyzer {
	an, err := newTextAnalyzer(config)
	if err != nil {
		return nil
	}
	return an
}

// analyzeTerms gives rows the analysed terms of an (none for a custom
// configuration, an nil), keeping those an made already.
func analyzeTerms(rows []*pgvecRow, an *textAnalyzer) {
	for _, r := range rows {
		if r.termsAn != an || an != nil && r.terms == nil {
			r.terms, r.termsAn = nil, an
			if an != nil {
				r.terms = pgvecAnalyze(an, r.content, r.doc.Metadata)
			}
		}
	}
}

// pgvecAnalyze returns the analysed form of a chunk's content and metadata.
func pgvecAnalyze(an *textAnalyzer, content string, meta map[string]any) *pgvecTerms {
	tf, n := bm25DocTerms(an, content, meta)
	t := &pgvecTerms{terms: slices.Sorted(maps.Keys(tf)), len: n}
	t.tf = make([]int32, len(t.terms))
	for i, term := range t.terms {
		t.tf[i] = tf[term]
	}
	return t
}

// pgvecPosting is one row of the posting table.
type pgvecPosting struct {
	term string
	cid  [16]byte
	tf   int32
	len  int32
}

// pgvecPostings returns the posting rows of chunks (ids[i] analysed as
// terms[i]), the empty-term row of each first. IDs the store did not make
// are skipped.
func pgvecPostings(ids []string, terms []*pgvecTerms) []pgvecPosting {
	var out []pgvecPosting
	for i, id := range ids {
		u, ok := pgvecChunkUUID(id)
		if !ok || terms[i] == nil {
			continue
		}
		t := terms[i]
		out = append(out, pgvecPosting{term: "", cid: u, tf: 0, len: t.len})
		for j, term := range t.terms {
			out = append(out, pgvecPosting{term: term, cid: u, tf: t.tf[j], len: t.len})
		}
	}
	return out
}

// writeTerms replaces the postings of rows (just written to the chunk
// table) inside tx: their old postings (of an overwritten chunk) are
// deleted, the new ones written with COPY when useCopy, else with
// multi-row INSERTs.
func (s *PgvecStore) writeTerms(ctx context.Context, tx pgx.Tx, rows []*pgvecRow, useCopy bool) error {
	if len(rows) == 0 || rows[0].termsAn == nil {
		return nil // a custom configuration: no postings
	}
	ids := make([]string, len(rows))
	terms := make([]*pgvecTerms, len(rows))
	for i, r := range rows {
		ids[i], terms[i] = r.id, r.terms
	}
	return pgvecWritePostings(ctx, tx, s.names, ids, terms, useCopy)
}

// pgvecWritePostings deletes the postings of ids and writes those of terms
// (terms[i] belonging to ids[i]) inside tx.
func pgvecWritePostings(ctx context.Context, tx pgx.Tx, n pgvecNames, ids []string, terms []*pgvecTerms, useCopy bool) error {
	kw := pgvecIdent(n.kw)
	cids := make([][16]byte, 0, len(ids))
	for _, id := range ids {
		if u, ok := pgvecChunkUUID(id); ok {
			cids = append(cids, u)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+kw+` WHERE cid = ANY($1::uuid[])`, cids); err != nil {
		return fmt.Errorf("delete old postings: %w", err)
	}
	ps := pgvecPostings(ids, terms)
	if len(ps) == 0 {
		return nil
	}
	if useCopy {
		return pgvecCopyPostings(ctx, tx, n, ps)
	}
	// One statement per batch, each chunk's postings within one statement
	// (the statistics trigger counts a chunk by its empty-term row).
	for start := 0; start < len(ps); {
		end := min(start+pgvecTermBatch, len(ps))
		for end < len(ps) && ps[end].term != "" {
			end++
		}
		batch := ps[start:end]
		termCol := make([]string, len(batch))
		cidCol := make([][16]byte, len(batch))
		tfCol := make([]int32, len(batch))
		lenCol := make([]int32, len(batch))
		for i, p := range batch {
			termCol[i], cidCol[i], tfCol[i], lenCol[i] = p.term, p.cid, p.tf, p.len
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+kw+` (term, cid, tf, len)
			SELECT * FROM unnest($1::text[], $2::uuid[], $3::int4[], $4::int4[])`, termCol, cidCol, tfCol, lenCol); err != nil {
			return fmt.Errorf("insert %d postings: %w", len(batch), err)
		}
		start = end
	}
	return nil
}

// pgvecCopyPostings writes ps into the posting table with one COPY, in tx.
func pgvecCopyPostings(ctx context.Context, tx pgx.Tx, n pgvecNames, ps []pgvecPosting) error {
	src := pgx.CopyFromSlice(len(ps), func(i int) ([]any, error) {
		p := &ps[i]
		return []any{p.term, p.cid, p.tf, p.len}, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{n.kw}, pgvecTermColumns, src); err != nil {
		return fmt.Errorf("copy %d postings: %w", len(ps), err)
	}
	return nil
}

// pgvecCreateV4 creates the posting and frequency tables with their
// triggers and fills them from the stored chunks (an upgrade in place: the
// chunk table itself is not rewritten).
func pgvecCreateV4(ctx context.Context, tx pgx.Tx, n pgvecNames, _ int, _ string, language string) error {
	t, kw, df := pgvecIdent(n.table), pgvecIdent(n.kw), pgvecIdent(n.kwDF)
	fn := pgvecIdent(n.kwSync)
	a := strconv.FormatFloat(bm25K1*(1-bm25B), 'g', -1, 64)
	b0 := strconv.FormatFloat(bm25K1*bm25B/pgvecImpactLen, 'g', -1, 64)
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + kw + ` (
			term text NOT NULL,
			cid  uuid NOT NULL,
			tf   integer NOT NULL,
			len  integer NOT NULL,
			w    real GENERATED ALWAYS AS (tf / (tf + ` + a + ` + ` + b0 + ` * len)) STORED
		)`,
		`CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.kw+"_rank") + ` ON ` + kw + ` (term, w DESC, cid DESC)`,
		`CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.kw+"_cid") + ` ON ` + kw + ` (cid, term) INCLUDE (tf, len)`,
		`CREATE TABLE IF NOT EXISTS ` + df + ` (
			term text NOT NULL,
			df   bigint NOT NULL,
			len  bigint NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS ` + pgvecIdent(n.kwDF+"_term") + ` ON ` + df + ` (term) INCLUDE (df, len)`,
		// Postings of deleted chunks go with them (chunk IDs the store did
		// not make have none); postings written or deleted append their
		// frequency deltas.
		`CREATE OR REPLACE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $f$
		BEGIN
			IF TG_TABLE_NAME = ` + pgvecLiteral(n.kw) + ` THEN
				IF TG_OP = 'INSERT' THEN
					INSERT INTO ` + df + ` (term, df, len)
					SELECT term, count(*), coalesce(sum(len) FILTER (WHERE term = ''), 0) FROM ayd_new GROUP BY term;
				ELSE
					INSERT INTO ` + df + ` (term, df, len)
					SELECT term, -count(*), -coalesce(sum(len) FILTER (WHERE term = ''), 0) FROM ayd_old GROUP BY term;
				END IF;
			ELSIF TG_OP = 'TRUNCATE' THEN
				TRUNCATE ` + kw + `, ` + df + `;
			ELSE
				DELETE FROM ` + kw + ` WHERE cid IN (SELECT ` + pgvecCIDSQL("id") + ` FROM ayd_old);
			END IF;
			RETURN NULL;
		END $f$`,
		`DROP TRIGGER IF EXISTS askyourdocs_kw_insert ON ` + kw,
		`CREATE TRIGGER askyourdocs_kw_insert AFTER INSERT ON ` + kw + ` REFERENCING NEW TABLE AS ayd_new FOR EACH STATEMENT EXECUTE FUNCTION ` + fn + `()`,
		`DROP TRIGGER IF EXISTS askyourdocs_kw_delete ON ` + kw,
		`CREATE TRIGGER askyourdocs_kw_delete AFTER DELETE ON ` + kw + ` REFERENCING OLD TABLE AS ayd_old FOR EACH STATEMENT EXECUTE FUNCTION ` + fn + `()`,
		`DROP TRIGGER IF EXISTS askyourdocs_chunk_delete ON ` + t,
		`CREATE TRIGGER askyourdocs_chunk_delete AFTER DELETE ON ` + t + ` REFERENCING OLD TABLE AS ayd_old FOR EACH STATEMENT EXECUTE FUNCTION ` + fn + `()`,
		`DROP TRIGGER IF EXISTS askyourdocs_chunk_truncate ON ` + t,
		`CREATE TRIGGER askyourdocs_chunk_truncate AFTER TRUNCATE ON ` + t + ` FOR EACH STATEMENT EXECUTE FUNCTION ` + fn + `()`,
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return pgvecRebuildTerms(ctx, tx, n, language)
}

// pgvecLiteral quotes s as an SQL string literal.
func pgvecLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// pgvecRebuildBatch is the number of chunks analysed per round when the
// postings are rebuilt.
const pgvecRebuildBatch = 2000

// pgvecRebuildTerms empties the posting table and fills it again from every
// stored chunk, analysed in language (left empty when language has no
// textAnalyzer), inside tx; the triggers record the frequencies, merged at
// the end.
func pgvecRebuildTerms(ctx context.Context, tx pgx.Tx, n pgvecNames, language string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM `+pgvecIdent(n.kw)); err != nil {
		return fmt.Errorf("empty postings: %w", err)
	}
	an := pgvecAnalyzer(language)
	if an == nil {
		return nil // a custom configuration: ranked with the tsvector column
	}
	after := ""
	for {
		rows, err := tx.Query(ctx, `SELECT id, content, metadata FROM `+pgvecIdent(n.table)+
			` WHERE id > $1 ORDER BY id LIMIT $2`, after, pgvecRebuildBatch)
		if err != nil {
			return fmt.Errorf("read chunks for postings: %w", err)
		}
		var ids []string
		var terms []*pgvecTerms
		for rows.Next() {
			var id, content string
			var meta map[string]any
			if err := rows.Scan(&id, &content, &meta); err != nil {
				rows.Close()
				return fmt.Errorf("read chunks for postings: %w", err)
			}
			ids = append(ids, id)
			terms = append(terms, pgvecAnalyze(an, content, meta))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read chunks for postings: %w", err)
		}
		if len(ids) == 0 {
			if _, err := tx.Exec(ctx, pgvecCompactSQL(n), nil); err != nil {
				return fmt.Errorf("compact term frequencies: %w", err)
			}
			// Fresh statistics: until autovacuum's next ANALYZE the planner
			// would take the new tables for empty ones.
			if _, err := tx.Exec(ctx, `ANALYZE `+pgvecIdent(n.kw)+`, `+pgvecIdent(n.kwDF)); err != nil {
				return fmt.Errorf("analyze postings: %w", err)
			}
			return nil
		}
		if err := pgvecWritePostings(ctx, tx, n, ids, terms, false); err != nil {
			return err
		}
		after = ids[len(ids)-1]
	}
}

// pgvecCompactSQL merges the frequency deltas of the terms bound as $1
// (all terms when $1 is NULL) into one row per term, dropping terms whose
// counts are zero.
func pgvecCompactSQL(n pgvecNames) string {
	df := pgvecIdent(n.kwDF)
	return `WITH ayd_d AS (DELETE FROM ` + df + ` WHERE $1::text[] IS NULL OR term = ANY($1::text[]) RETURNING term, df, len)
		INSERT INTO ` + df + ` (term, df, len)
		SELECT term, sum(df), sum(len) FROM ayd_d GROUP BY term HAVING sum(df) <> 0 OR sum(len) <> 0`
}

// pgvecAnalyzePostings is the number of postings written by one call from
// which compactTerms also runs ANALYZE on the keyword tables.
const pgvecAnalyzePostings = 50000

// compactTerms merges the frequency deltas of the terms of rows (just
// committed) in a transaction of its own, when no other writer of the
// store is doing so (a transaction-scoped try-lock: two compactions never
// interleave, a writer never waits for one). Rows other writers append
// meanwhile are not visible to it and stay for a later compaction. The
// write is committed already, so a failure is only logged: the deltas are
// then merely not merged yet.
func (s *PgvecStore) compactTerms(ctx context.Context, rows []*pgvecRow) {
	if len(rows) == 0 || rows[0].termsAn == nil {
		return
	}
	seen := map[string]bool{"": true}
	terms := []string{""}
	for _, r := range rows {
		if r.terms == nil {
			continue
		}
		for _, t := range r.terms.terms {
			if !seen[t] {
				seen[t] = true
				terms = append(terms, t)
			}
		}
	}
	slices.Sort(terms)
	postings := 0
	for _, r := range rows {
		if r.terms != nil {
			postings += len(r.terms.terms) + 1
		}
	}
	s.compactTermList(ctx, terms, postings)
}

// compactTermList is compactTerms for the given terms (the empty one
// included), of a write of the given number of postings.
func (s *PgvecStore) compactTermList(ctx context.Context, terms []string, postings int) {
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var got bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, pgvecLockKey(s.names.kwDF)).Scan(&got); err != nil {
			return fmt.Errorf("compact term frequencies: %w", err)
		}
		if !got {
			return nil
		}
		if _, err := tx.Exec(ctx, pgvecCompactSQL(s.names), terms); err != nil {
			return err
		}
		// A bulk write can multiply the tables before autovacuum analyses
		// them; until then the planner's estimates would be those of much
		// smaller tables.
		if postings >= pgvecAnalyzePostings {
			_, err := tx.Exec(ctx, `ANALYZE `+pgvecIdent(s.names.kw)+`, `+pgvecIdent(s.names.kwDF))
			return err
		}
		return nil
	})
	if err != nil {
		slog.Warn("pgvector store: merging term frequency deltas failed; a later write retries", "store", s.name, "err", err)
	}
}
