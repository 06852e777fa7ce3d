package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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

// checkManifest compares the embedder the store records (IndexInfo), or
// else the record an earlier version kept beside the store
// (legacyManifest), with the configured one. For the local embedder the
// dimension is known; for a model the recorded dimension is trusted unless
// EMBEDDING_DIM says otherwise (the provider then rejects vectors of
// another length). The store records the embedder itself at its first
// write that adds chunks; a write into a store that holds chunks but no
// record (an index built by another program, whose embedder is unknown) is
// refused here, before it. A legacy record is dropped once the store has
// its own (here, or when the backend closes after the write).
func (b *backend) checkManifest(ctx context.Context, dim int, write bool) error {
	info, found, err := b.store.IndexInfo(ctx)
	if err != nil {
		return err
	}
	m, legacy, err := b.store.legacyManifest(ctx)
	if err != nil {
		return err
	}
	switch {
	case found && legacy:
		if err := b.store.dropLegacyManifest(ctx); err != nil {
			return err
		}
	case legacy:
		info, found = askyourdocs.IndexInfo{Embedder: m.Embedder, Dim: m.Dim, Created: m.Created}, true
		b.legacyPending = true
	}
	if found {
		return b.matchManifest(info, dim)
	}
	if write {
		n, err := b.store.chunkCount(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			// Mixing vectors of another embedder would give garbage.
			// Refuse rather than guess.
			return fmt.Errorf("%w: %s holds chunks but no record of the embedder that built them; index into another --data directory",
				errEmbedderMismatch, b.store.describe())
		}
	}
	// A new index: the store will record the embedder's own name.
	b.manifest = indexManifest{Embedder: b.emb.Name(), Dim: dim}
	return nil
}

// dropMigratedManifest drops the legacy record checkManifest went by once
// the store records its embedder itself (a write added chunks).
func (b *backend) dropMigratedManifest(ctx context.Context) error {
	if !b.legacyPending || b.store == nil {
		return nil
	}
	if _, found, err := b.store.IndexInfo(ctx); err != nil || !found {
		return err
	}
	b.legacyPending = false
	return b.store.dropLegacyManifest(ctx)
}

// matchManifest checks a recorded embedder against the configured one and
// adopts the record. A record names the model as the user configured it
// (earlier versions recorded that) or as the embedder names itself (the
// store records that, e.g. with the provider's prefix).
func (b *backend) matchManifest(info askyourdocs.IndexInfo, dim int) error {
	if (info.Embedder != b.manifest.Embedder && info.Embedder != b.emb.Name()) || (dim > 0 && info.Dim != dim) {
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
