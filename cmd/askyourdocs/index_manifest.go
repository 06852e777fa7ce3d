package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// manifestFile is the file next to the database in which earlier versions
// recorded which embedder built the index; the store records it itself
// now (IndexInfo), and the file is migrated into it on open.
const manifestFile = "askyourdocs-index.json"

// pgManifestTable is the table in which earlier versions recorded the
// embedder of each PgvecStore the CLI built; migrated into the store's own
// record on open.
const pgManifestTable = "askyourdocs_cli_index"

// errEmbedderMismatch is returned when the configured embedder is not the one
// that built the index: its vectors would not be comparable.
var errEmbedderMismatch = errors.New("index was built with another embedder")

// indexManifest is the CLI's view of the embedder record (IndexInfo).
type indexManifest struct {
	Embedder string    `json:"embedder"`
	Dim      int       `json:"dim"`
	Created  time.Time `json:"created"`
}

// manifestPath is the legacy manifest beside the database:
// askyourdocs-index.json for the default store name, else
// <name>.askyourdocs-index.json.
func (s *localStore) manifestPath() string {
	if s.name == storeName {
		return filepath.Join(s.dir, manifestFile)
	}
	return filepath.Join(s.dir, s.name+"."+manifestFile)
}

func (s *sqliteStore) legacyManifest(context.Context) (indexManifest, bool, error) {
	var m indexManifest
	p := s.manifests.manifestPath()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read index manifest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("read index manifest %s: %w", p, err)
	}
	return m, true, nil
}

func (s *sqliteStore) dropLegacyManifest(context.Context) error {
	if err := os.Remove(s.manifests.manifestPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the migrated index manifest: %w", err)
	}
	return nil
}

// checkManifest compares the embedder the store records (IndexInfo) with
// the configured one, first moving a record an earlier version kept
// beside the store into it. For the local embedder the dimension is known;
// for a model the recorded dimension is trusted unless EMBEDDING_DIM says
// otherwise (the provider then rejects vectors of another length). A
// write records the embedder, with the fusion it implies, in an empty
// store, in one step across processes.
func (b *backend) checkManifest(ctx context.Context, dim int, write bool) error {
	info, found, err := b.store.IndexInfo(ctx)
	if err != nil {
		return err
	}
	if !found {
		if m, ok, err := b.store.legacyManifest(ctx); err != nil {
			return err
		} else if ok {
			fusion := askyourdocs.FusionDefaults(m.Embedder)
			if info, _, err = b.store.RecordIndexInfo(ctx, askyourdocs.IndexInfo{Embedder: m.Embedder, Dim: m.Dim, Created: m.Created, Fusion: &fusion}, false); err != nil {
				return err
			}
			if err := b.store.dropLegacyManifest(ctx); err != nil {
				return err
			}
			found = true
		}
	}
	if found {
		return b.matchManifest(info, dim)
	}
	if !write {
		return nil
	}
	if dim == 0 {
		if dim, err = probeDim(ctx, b.emb); err != nil {
			return err
		}
	}
	fusion := askyourdocs.FusionDefaults(b.manifest.Embedder)
	want := askyourdocs.IndexInfo{Embedder: b.manifest.Embedder, Dim: dim, Created: time.Now().UTC().Truncate(time.Second), Fusion: &fusion}
	// Another process may be checking at the same moment: RecordIndexInfo
	// checks and records in one step; a record it made first is checked.
	info, existed, err := b.store.RecordIndexInfo(ctx, want, true)
	if errors.Is(err, askyourdocs.ErrIndexUnrecorded) {
		// An index built by another program: its embedder is unknown, so
		// mixing vectors would give garbage. Refuse rather than guess.
		return fmt.Errorf("%w: %s holds chunks but no record of the embedder that built them; index into another --data directory",
			errEmbedderMismatch, b.store.describe())
	}
	if err != nil {
		return err
	}
	if existed {
		return b.matchManifest(info, dim)
	}
	b.manifest = indexManifest{Embedder: info.Embedder, Dim: info.Dim, Created: info.Created}
	return nil
}

// matchManifest checks a recorded embedder against the configured one and
// adopts the record.
func (b *backend) matchManifest(info askyourdocs.IndexInfo, dim int) error {
	if info.Embedder != b.manifest.Embedder || (dim > 0 && info.Dim != dim) {
		return fmt.Errorf("%w: %s has vectors of %s (dim %d), but this run embeds with %s%s; "+
			"set EMBEDDING_MODEL/EMBEDDING_DIM to match, or index into another --data directory",
			errEmbedderMismatch, b.store.describe(), info.Embedder, info.Dim, b.manifest.Embedder, dimSuffix(dim))
	}
	b.manifest = indexManifest{Embedder: info.Embedder, Dim: info.Dim, Created: info.Created}
	return nil
}

func dimSuffix(dim int) string {
	if dim <= 0 {
		return ""
	}
	return fmt.Sprintf(" (dim %d)", dim)
}

// pgRecordedEmbedder reads the embedder recorded for the store called name
// before NewPgvecStore touches the schema: the store's own record, else the
// table an earlier version of the CLI kept; nil when nothing is recorded.
func pgRecordedEmbedder(ctx context.Context, dsn, name string) (*indexManifest, error) {
	info, found, err := askyourdocs.ReadPgvecIndexInfo(ctx, dsn, name)
	if err != nil {
		return nil, err
	}
	if found {
		return &indexManifest{Embedder: info.Embedder, Dim: info.Dim, Created: info.Created}, nil
	}
	return pgLegacyManifest(ctx, dsn, name)
}

// pgLegacyManifest reads the record of the table askyourdocs_cli_index an
// earlier version of the CLI kept, with a connection of its own; nil when
// there is none.
func pgLegacyManifest(ctx context.Context, dsn, name string) (*indexManifest, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgManifestTable).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for %s: %w", pgManifestTable, err)
	}
	if !exists {
		return nil, nil
	}
	var m indexManifest
	err = conn.QueryRow(ctx, "SELECT embedder, dim, created FROM "+pgManifestTable+" WHERE store = $1", name).Scan(&m.Embedder, &m.Dim, &m.Created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", pgManifestTable, err)
	}
	return &m, nil
}
