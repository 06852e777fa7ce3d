package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// sessionKeyFile is the file under --data that holds the secret login
// cookies are signed with (without --pg).
const sessionKeyFile = "serve-session.key"

// pgSessionKeyTable holds the signing secret in a PostgreSQL database, so
// every serve --pg process, on any machine, shares it.
const pgSessionKeyTable = "askyourdocs_serve_secret"

// sessionStore issues and checks login sessions. A session is a signed
// cookie, not server state: "v1.<expiry>.<nonce>.<HMAC-SHA256>", the key
// derived from a secret every process on the same --data directory or
// --pg database shares and from the configured credentials, so a session
// started on one process works on all of them and changing the password
// ends every session. Safe for concurrent use.
type sessionStore struct {
	key []byte
	now func() time.Time
}

// newSessionStore loads (or creates) the signing secret: in the database
// of a --pg backend, else in dataDir.
func newSessionStore(ctx context.Context, b *backend, opts serveOptions) (*sessionStore, error) {
	var secret []byte
	var err error
	if pg, ok := b.store.(*pgStore); ok {
		secret, err = pgSessionSecret(ctx, pg)
	} else {
		secret, err = fileSessionSecret(filepath.Join(opts.dataDir, sessionKeyFile))
	}
	if err != nil {
		return nil, fmt.Errorf("serve: session key: %w", err)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("askyourdocs session\x00" + opts.user + "\x00" + opts.password))
	return &sessionStore{key: m.Sum(nil), now: time.Now}, nil
}

// fileSessionSecret reads the secret at path, creating it (mode 0600)
// when missing. Two processes starting at once agree on one secret: each
// writes a temporary file and links it into place, and the loser reads
// the winner's.
func fileSessionSecret(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b, nil
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".session-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(secret); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 32 {
		return nil, fmt.Errorf("%s holds %d bytes, want 32: delete it to create a new one", path, len(b))
	}
	return b, nil
}

// pgSessionSecret reads the secret from the database, inserting one when
// there is none (the first process wins, the others read its row).
func pgSessionSecret(ctx context.Context, s *pgStore) ([]byte, error) {
	secret := make([]byte, 32)
	rand.Read(secret)
	// Under an advisory lock of its own: two processes creating the table
	// at once would otherwise race on CREATE TABLE IF NOT EXISTS.
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('"+pgSessionKeyTable+"'))"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+pgSessionKeyTable+" (name text PRIMARY KEY, secret bytea NOT NULL)")
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.Pool.Exec(ctx, "INSERT INTO "+pgSessionKeyTable+" (name, secret) VALUES ('session', $1) ON CONFLICT (name) DO NOTHING", secret); err != nil {
		return nil, err
	}
	var got []byte
	if err := s.Pool.QueryRow(ctx, "SELECT secret FROM "+pgSessionKeyTable+" WHERE name = 'session'").Scan(&got); err != nil {
		return nil, err
	}
	return got, nil
}

// create returns a new session token, valid for sessionTTL.
func (st *sessionStore) create() string {
	var nonce [16]byte
	rand.Read(nonce[:])
	var exp [8]byte
	binary.BigEndian.PutUint64(exp[:], uint64(st.now().Add(sessionTTL).Unix()))
	body := "v1." + base64.RawURLEncoding.EncodeToString(exp[:]) + "." + base64.RawURLEncoding.EncodeToString(nonce[:])
	return body + "." + st.sign(body)
}

func (st *sessionStore) sign(body string) string {
	m := hmac.New(sha256.New, st.key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// valid reports whether tok is a live session signed with this store's key.
func (st *sessionStore) valid(tok string) bool {
	i := strings.LastIndexByte(tok, '.')
	if i < 0 || !strings.HasPrefix(tok, "v1.") {
		return false
	}
	body, mac := tok[:i], tok[i+1:]
	if !hmac.Equal([]byte(mac), []byte(st.sign(body))) {
		return false
	}
	parts := strings.Split(body, ".")
	if len(parts) != 3 {
		return false
	}
	exp, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(exp) != 8 {
		return false
	}
	return st.now().Before(time.Unix(int64(binary.BigEndian.Uint64(exp)), 0))
}
