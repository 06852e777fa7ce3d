package engine

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// The tests in this file run PgvecStores in separate processes, as
// production does: the test binary runs itself again as a child
// (TestPgvecChildProcess, selected by the pgChildEnv variable), so each
// store has its own sessions and a child can be killed with SIGKILL.

// pgChildEnv names the child's role; its other parameters are PGCHILD_*.
const pgChildEnv = "ASKYOURDOCS_PGTEST_CHILD"

// TestPgvecChildProcess is the body of the child processes of the tests
// below; run on its own it skips. A child reports on stdout, one line per
// event, and waits for "go" on stdin where the parent wants all children to
// start at once.
func TestPgvecChildProcess(t *testing.T) {
	role := os.Getenv(pgChildEnv)
	if role == "" {
		t.Skip("the body of the multi-process tests' child processes")
	}
	if err := pgChildMain(role); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
}

func pgChildMain(role string) error {
	ctx := context.Background()
	dsn, name := os.Getenv("PGCHILD_DSN"), os.Getenv("PGCHILD_STORE")
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	in := bufio.NewReader(os.Stdin)
	waitGo := func() error {
		say("ready")
		line, err := in.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "go" {
			return fmt.Errorf("waiting for go: %q, %v", line, err)
		}
		return nil
	}
	switch role {
	case "reembed":
		return pgReembedChildMain(say, in)
	case "bulk":
		return pgBulkChildMain(say, in)
	case "open":
		if err := waitGo(); err != nil {
			return err
		}
		s, err := NewPgvecStore(ctx, nil, name, newTestEmbedder(16), dsn, 16)
		if err != nil {
			return err
		}
		say("created=%v", s.migrationInfo().Created)
		return s.Close()
	case "replace":
		s, err := NewPgvecStore(ctx, nil, name, newTestEmbedder(16), dsn, 16)
		if err != nil {
			return err
		}
		defer s.Close()
		n, _ := strconv.Atoi(os.Getenv("PGCHILD_N"))
		src, version := os.Getenv("PGCHILD_SOURCE"), os.Getenv("PGCHILD_VERSION")
		if err := waitGo(); err != nil {
			return err
		}
		if _, _, err := s.replaceSource(ctx, replaceScope{sources: []string{src}}, pgProcDocs(src, version, n), nil); err != nil {
			return err
		}
		say("committed %s", version)
		return nil
	case "loop":
		// Replaces the source with its two versions in turn until killed;
		// with PGCHILD_BLOCK=1 it stops inside the first transaction.
		s, err := NewPgvecStore(ctx, nil, name, newTestEmbedder(16), dsn, 16)
		if err != nil {
			return err
		}
		defer s.Close()
		block := os.Getenv("PGCHILD_BLOCK") == "1"
		s.replaceHook = func(context.Context) error {
			say("in-tx")
			if block {
				_, _ = io.Copy(io.Discard, in) // until killed
			}
			return nil
		}
		src := os.Getenv("PGCHILD_SOURCE")
		say("started")
		for i := 0; ; i++ {
			v := pgProcVersions[(i+1)%2]
			if _, _, err := s.replaceSource(ctx, replaceScope{sources: []string{src}}, pgProcDocs(src, v.name, v.n),
				func(done, total int) { say("progress %d/%d", done, total) }); err != nil {
				return err
			}
			say("committed %s", v.name)
		}
	}
	return fmt.Errorf("unknown role %q", role)
}

// pgProcVersions are the two versions of the killed writer's source.
var pgProcVersions = []struct {
	name string
	n    int
}{{"v1", 150}, {"v2", 260}}

// pgProcDocs returns version of source src: n chunks that name both.
func pgProcDocs(src, version string, n int) []*ai.Document {
	docs := make([]*ai.Document, n)
	for i := range docs {
		docs[i] = ai.DocumentFromText(fmt.Sprintf("%s chunk %d of version %s about topic%d", src, i, version, i%7),
			map[string]any{MetaSource: src, MetaURL: src + "/doc", "version": version})
	}
	return docs
}

// pgProcIDs returns the chunk IDs of pgProcDocs(src, version, n), sorted.
func pgProcIDs(t testing.TB, src, version string, n int) []string {
	t.Helper()
	rows, err := pgvecPrepare(pgProcDocs(src, version, n))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	slices.Sort(ids)
	return ids
}

// pgProcState returns the version of source src in the store and checks
// that the source holds exactly that version's chunks: all of them, nothing
// of another version, no ID twice. "" means the source is empty.
func pgProcState(t testing.TB, conn *pgx.Conn, table, src string, sizes map[string]int) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT id, metadata->>'version' FROM `+pgvecIdent(table)+` WHERE source = $1 ORDER BY id`, src)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	versions := map[string]int{}
	for rows.Next() {
		var id, v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		versions[v]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		return ""
	}
	if len(versions) != 1 {
		t.Fatalf("source %q mixes versions: %v", src, versions)
	}
	var v string
	for v = range versions {
	}
	if want := pgProcIDs(t, src, v, sizes[v]); !slices.Equal(ids, want) {
		t.Fatalf("source %q holds %d chunks of version %s, want exactly its %d", src, len(ids), v, len(want))
	}
	return v
}

// pgChild is a running child process.
type pgChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	errb  *strings.Builder
	done  chan error
}

// pgStartChild starts the test binary as a child in role with env.
func pgStartChild(t *testing.T, role string, env ...string) *pgChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPgvecChildProcess$", "-test.count=1", "-test.v=false")
	cmd.Env = append(append(os.Environ(), pgChildEnv+"="+role), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &pgChild{cmd: cmd, stdin: stdin, lines: make(chan string, 1024), errb: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = &pgLockedWriter{w: c.errb}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return c
}

// pgLockedWriter serialises writes to w (exec copies stderr in a goroutine).
type pgLockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *pgLockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *pgLockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.w)
}

// waitFor reads the child's lines until one starts with prefix and returns
// it; it fails the test if the child ends first or within 2 minutes.
func (c *pgChild) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child ended before %q: %v\nstderr:\n%s", prefix, <-c.done, c.cmd.Stderr)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			t.Fatalf("child: no %q within 2 minutes\nstderr:\n%s", prefix, c.cmd.Stderr)
		}
	}
}

// wait waits for the child to end and fails the test unless it succeeded.
func (c *pgChild) wait(t *testing.T) {
	t.Helper()
	for range c.lines {
	}
	if err := <-c.done; err != nil {
		t.Fatalf("child failed: %v\nstderr:\n%s", err, c.cmd.Stderr)
	}
}

// pgTestFreshDB creates an empty database for the test (dropped at its
// end) and returns its DSN: no vector extension, no tables.
func pgTestFreshDB(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("this test needs ASKYOURDOCS_TEST_DSN as a postgres:// URL, got %q", dsn)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	db := "ayd_fresh_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgvecIdent(db)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop fresh database: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgvecIdent(db)+` WITH (FORCE)`); err != nil {
			t.Errorf("drop fresh database: %v", err)
		}
	})
	u.Path = "/" + db
	return u.String()
}

// TestPgvecStoreConcurrentStartProcesses starts six processes that open the
// same store at once on a fresh database (no vector extension yet): all
// succeed and exactly one creates the schema.
func TestPgvecStoreConcurrentStartProcesses(t *testing.T) {
	dsn := pgTestFreshDB(t, pgTestDSN(t))
	name := pgTestStoreName(t)
	var children []*pgChild
	for range 6 {
		children = append(children, pgStartChild(t, "open", "PGCHILD_DSN="+dsn, "PGCHILD_STORE="+name))
	}
	for _, c := range children {
		c.waitFor(t, "ready")
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	created := 0
	for _, c := range children {
		if c.waitFor(t, "created=") == "created=true" {
			created++
		}
		c.wait(t)
	}
	if created != 1 {
		t.Errorf("%d of 6 concurrent starts created the schema, want 1", created)
	}
	s := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	if m := s.migrationInfo(); m.Created || m.FromVersion != pgvecSchemaVersion() {
		t.Errorf("after the concurrent starts: %+v", m)
	}
}

// TestPgvecStoreConcurrentWriterProcesses runs six writer processes at once:
// three replace one shared source with versions of different sizes, three
// write a source of their own. The shared source ends up holding exactly
// one writer's version (as if they had run one after another), the own
// sources each their writer's, and no chunk ID occurs twice.
func TestPgvecStoreConcurrentWriterProcesses(t *testing.T) {
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	s := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	ctx := context.Background()
	if _, _, err := s.replaceSource(ctx, replaceScope{sources: []string{"shared"}}, pgProcDocs("shared", "old", 90), nil); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{"old": 90}
	type job struct{ src, version string }
	var jobs []job
	for i := range 3 {
		v := fmt.Sprintf("w%d", i)
		sizes[v] = 60 + 50*i
		jobs = append(jobs, job{"shared", v}, job{fmt.Sprintf("own%d", i), v})
	}
	var children []*pgChild
	for _, j := range jobs {
		children = append(children, pgStartChild(t, "replace", "PGCHILD_DSN="+dsn, "PGCHILD_STORE="+name,
			"PGCHILD_SOURCE="+j.src, "PGCHILD_VERSION="+j.version, "PGCHILD_N="+strconv.Itoa(sizes[j.version])))
	}
	for _, c := range children {
		c.waitFor(t, "ready")
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range children {
		c.waitFor(t, "committed")
		c.wait(t)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if v := pgProcState(t, conn, s.Table(), "shared", sizes); v == "" || v == "old" {
		t.Errorf("shared source holds version %q, want one of the writers'", v)
	}
	for i := range 3 {
		if v := pgProcState(t, conn, s.Table(), fmt.Sprintf("own%d", i), sizes); v != fmt.Sprintf("w%d", i) {
			t.Errorf("source own%d holds version %q", i, v)
		}
	}
	var n, distinct int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM `+pgvecIdent(s.Table())).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != distinct {
		t.Errorf("%d rows but %d distinct chunk IDs", n, distinct)
	}
	// The keyword postings and frequencies the writers appended agree
	// with the chunks.
	pgTestCheckPostings(t, s, n)
}

// TestPgvecStoreKilledWriter kills a process that keeps replacing a source
// with its two versions, 24 times: half the kills hit it inside the
// replacement's transaction (the child stops there), half at a random line
// of its progress output. After every kill the source holds one version
// wholly; at the end the keyword postings agree with the chunks.
func TestPgvecStoreKilledWriter(t *testing.T) {
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	s := pgTestOpen(t, dsn, name, newTestEmbedder(16), 16)
	ctx := context.Background()
	sizes := map[string]int{}
	for _, v := range pgProcVersions {
		sizes[v.name] = v.n
	}
	if _, _, err := s.replaceSource(ctx, replaceScope{sources: []string{"killed"}}, pgProcDocs("killed", "v1", sizes["v1"]), nil); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	seen := map[string]int{}
	for i := range 24 {
		block := i%2 == 0
		env := []string{"PGCHILD_DSN=" + dsn, "PGCHILD_STORE=" + name, "PGCHILD_SOURCE=killed"}
		if block {
			env = append(env, "PGCHILD_BLOCK=1")
		}
		c := pgStartChild(t, "loop", env...)
		c.waitFor(t, "started")
		if block {
			c.waitFor(t, "in-tx")
		} else {
			for range 1 + mrand.IntN(12) {
				c.waitFor(t, "")
			}
		}
		if err := c.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for range c.lines {
		}
		<-c.done
		v := pgProcState(t, conn, s.Table(), "killed", sizes)
		if v == "" {
			t.Fatalf("kill %d: the source is empty", i)
		}
		seen[v]++
	}
	t.Logf("source version after the kills: %v", seen)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.Table())).Scan(&n); err != nil {
		t.Fatal(err)
	}
	pgTestCheckPostings(t, s, n)
}
