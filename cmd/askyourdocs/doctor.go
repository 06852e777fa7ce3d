package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// doctorCheck is one line of doctor's report.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail, info
	Detail string `json:"detail"`
}

// doctorReport is doctor's --json output.
type doctorReport struct {
	Version string        `json:"version"`
	Data    string        `json:"data"`
	DataBy  string        `json:"dataFrom"`
	Checks  []doctorCheck `json:"checks"`
	Next    []string      `json:"next"`
}

func (r *doctorReport) add(name, status, format string, args ...any) {
	r.Checks = append(r.Checks, doctorCheck{Name: name, Status: status, Detail: fmt.Sprintf(format, args...)})
}

func (a *cliApp) cmdDoctor(ctx context.Context, args []string) error {
	fset, cf := a.flags("doctor")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("doctor", "doctor takes no arguments")
	}
	rep := &doctorReport{Version: version(), Data: cf.data, DataBy: a.dataFrom, Checks: []doctorCheck{}, Next: []string{}}
	dsn := cf.pg
	if dsn == "" {
		dsn = strings.TrimSpace(a.getenv("ASKYOURDOCS_DSN"))
	}

	// Models first: a bad spec makes opening the store fail too.
	modelsOK := a.doctorModels(ctx, rep)
	readDSN := cf.pgRead
	if readDSN == "" {
		readDSN = strings.TrimSpace(a.getenv("ASKYOURDOCS_READ_DSN"))
	}
	if dsn != "" {
		rep.Data = ""
		a.doctorPostgres(ctx, rep, dsn, jobNamespace(cf.name))
		if readDSN != "" {
			doctorReplica(ctx, rep, dsn, readDSN)
		}
	}

	a.doctorOCR(ctx, rep)

	// The index: what the other commands would use and what is in it.
	if dsn == "" {
		if _, err := os.Stat(cf.data); err != nil {
			rep.add("index", "warn", "no index at %s (%s)", cf.data, a.dataFrom)
			rep.Next = append(rep.Next, "askyourdocs index ./docs   # creates ./.askyourdocs here")
		}
	}
	if len(rep.Next) == 0 && modelsOK {
		b, err := a.open(ctx, cf, openOptions{})
		if err != nil {
			rep.add("index", "fail", "%s", explainError(err).Error())
			if errors.Is(err, errEmbedderMismatch) {
				rep.Next = append(rep.Next, "set EMBEDDING_MODEL/EMBEDDING_DIM to the recorded embedder, or index into another --data directory")
			}
		} else {
			defer b.Close()
			srcs, err := b.store.Sources(ctx)
			n, cerr := b.store.chunkCount(ctx)
			switch {
			case err != nil || cerr != nil:
				rep.add("index", "fail", "%v", errors.Join(err, cerr))
			case n == 0:
				rep.add("index", "warn", "%s is empty", storeLabel(b.store))
				rep.Next = append(rep.Next, "askyourdocs index ./docs")
			default:
				rep.add("index", "ok", "%s: %s, %s (%s)", storeLabel(b.store), count(len(srcs), "document", "documents"),
					count(n, "chunk", "chunks"), a.dataFrom)
				rep.add("languages", "info", "%s", sourceLanguages(srcs))
			}
			rep.add("embedder", "ok", "%s, dimension %d", b.manifest.Embedder, b.manifest.Dim)
		}
	}
	if len(rep.Next) == 0 {
		if a.getenv("LLM_MODEL") == "" {
			rep.Next = append(rep.Next, `askyourdocs ask "your question"   # extractive; set LLM_MODEL=ollama/llama3.2 for generated answers`)
		} else {
			rep.Next = append(rep.Next, `askyourdocs ask "your question"`)
		}
	}

	failed := false
	for _, c := range rep.Checks {
		failed = failed || c.Status == "fail"
	}
	if cf.json {
		if err := printJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		st := newStyle(a.stdout, a)
		fmt.Fprintf(a.stdout, "askyourdocs %s\n", rep.Version)
		for _, c := range rep.Checks {
			mark := map[string]string{"ok": st.green("ok  "), "warn": st.yellow("warn"), "fail": st.red("FAIL"), "info": st.dim("-   ")}[c.Status]
			fmt.Fprintf(a.stdout, "%s  %-10s %s\n", mark, c.Name, c.Detail)
		}
		fmt.Fprintln(a.stdout, "\nNext:")
		for _, n := range rep.Next {
			fmt.Fprintf(a.stdout, "  %s\n", n)
		}
	}
	if failed {
		return errDoctorFailed
	}
	return nil
}

// errDoctorFailed is doctor's error when a check failed (already reported).
var errDoctorFailed = &quietError{errors.New("some checks failed")}

// quietError is an error whose message was already printed: run only sets
// the exit status.
type quietError struct{ error }

func (e *quietError) Unwrap() error { return e.error }

// doctorModels checks LLM_MODEL, RERANK_MODEL and EMBEDDING_MODEL and the
// servers they need; false when a spec is unusable.
func (a *cliApp) doctorModels(ctx context.Context, rep *doctorReport) bool {
	ok := true
	pcfg, err := askyourdocs.ProviderConfigFromEnv()
	if err != nil {
		rep.add("models", "fail", "%v", err)
		return false
	}
	servers := map[string][]string{} // provider -> models named
	for _, env := range []string{"EMBEDDING_MODEL", "LLM_MODEL", "RERANK_MODEL"} {
		spec := strings.TrimSpace(a.getenv(env))
		if spec == "" {
			switch env {
			case "EMBEDDING_MODEL":
				rep.add("embedding", "info", "EMBEDDING_MODEL unset: built-in lexical embedder (no model server)")
			case "LLM_MODEL":
				rep.add("llm", "info", "LLM_MODEL unset: answers are extractive (quoted passages)")
			}
			continue
		}
		if err := checkModelSpec(env, spec); err != nil {
			rep.add(strings.ToLower(strings.TrimSuffix(env, "_MODEL")), "fail", "%s", err.Error())
			rep.Next = append(rep.Next, errorHint(err))
			ok = false
			continue
		}
		if _, err := askyourdocs.NewProviders(pcfg, nil, spec); err != nil {
			rep.add(strings.ToLower(strings.TrimSuffix(env, "_MODEL")), "fail", "%s=%s: %v", env, spec, err)
			ok = false
			continue
		}
		prov, name := askyourdocs.SplitModelSpec(spec)
		servers[prov] = append(servers[prov], name)
		rep.add(strings.ToLower(strings.TrimSuffix(env, "_MODEL")), "info", "%s=%s", env, spec)
	}
	if names, used := servers[askyourdocs.ProviderOllama]; used {
		host := ollamaBase(pcfg.OllamaHost)
		models, err := ollamaModels(ctx, host)
		if err != nil {
			rep.add("ollama", "fail", "Ollama at %s not reachable: %s", host, connectReason(err))
			rep.Next = append(rep.Next, "start Ollama ('ollama serve') or set OLLAMA_HOST")
		} else {
			rep.add("ollama", "ok", "Ollama at %s answers; models: %s", host, strings.Join(models, ", "))
			for _, n := range names {
				if !hasOllamaModel(models, n) {
					rep.add("ollama", "warn", "model %s is not pulled", n)
					rep.Next = append(rep.Next, "ollama pull "+n)
				}
			}
		}
	}
	if _, used := servers[askyourdocs.ProviderGPUStack]; used {
		rep.add("gpustack", "info", "GPUSTACK_URL=%s", pcfg.GPUStackURL)
	}
	return ok
}

// ollamaBase normalises OLLAMA_HOST as the provider does.
func ollamaBase(host string) string {
	host = strings.TrimSpace(host)
	if host == "" {
		return "http://localhost:11434" // ProviderConfig.OllamaHost's default
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
		if !strings.Contains(strings.TrimPrefix(host, "http://"), ":") {
			host += ":11434"
		}
	}
	return strings.TrimRight(host, "/")
}

// ollamaModels lists the models an Ollama server has (GET /api/tags).
func ollamaModels(ctx context.Context, base string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/tags", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tags); err != nil {
		return nil, fmt.Errorf("read /api/tags: %w", err)
	}
	out := make([]string, len(tags.Models))
	for i, m := range tags.Models {
		out[i] = m.Name
	}
	return out, nil
}

// hasOllamaModel reports whether name (":latest" implied) is in models.
func hasOllamaModel(models []string, name string) bool {
	for _, m := range models {
		if m == name || m == name+":latest" || strings.TrimSuffix(m, ":latest") == name {
			return true
		}
	}
	return false
}

// doctorPostgres checks the database: reachable, server version, pgvector
// and pg_trgm.
func (a *cliApp) doctorPostgres(ctx context.Context, rep *doctorReport, dsn, namespace string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		e := explainError(err)
		rep.add("postgres", "fail", "%s", e.Error())
		rep.Next = append(rep.Next, errorHint(e))
		return
	}
	defer conn.Close(context.Background())
	var ver string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&ver); err != nil {
		rep.add("postgres", "fail", "query: %v", err)
		return
	}
	rep.add("postgres", "ok", "PostgreSQL %s at %s:%d", ver, conn.Config().Host, conn.Config().Port)
	for _, ext := range []string{"vector", "pg_trgm"} {
		var installed, available string
		_ = conn.QueryRow(ctx, "SELECT coalesce(installed_version, ''), coalesce(default_version, '') FROM pg_available_extensions WHERE name = $1", ext).
			Scan(&installed, &available)
		switch {
		case installed != "":
			rep.add(ext, "ok", "%s %s installed", ext, installed)
		case available != "":
			rep.add(ext, "warn", "%s %s available, not yet created (the first index creates it)", ext, available)
		default:
			status := "fail"
			if ext == "pg_trgm" {
				status = "warn" // keyword search falls back to a scan
			}
			rep.add(ext, status, "%s is not available on this server", ext)
			rep.Next = append(rep.Next, "install the "+ext+" extension on the server")
		}
	}
	doctorWatched(ctx, rep, conn, namespace)
}

// doctorReplica checks the read replica (--pg-read): that it answers, is
// a standby, and how far its replay is behind the primary (the WAL bytes
// it has not replayed, and the age of the last transaction it replayed
// when it is behind).
func doctorReplica(ctx context.Context, rep *doctorReport, primary, replica string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, replica)
	if err != nil {
		rep.add("replica", "warn", "the read replica (--pg-read) does not answer, so searches read from the primary: %s", explainError(err).Error())
		return
	}
	defer conn.Close(context.Background())
	pc, err := pgx.Connect(ctx, primary)
	if err != nil {
		return // doctorPostgres reported it
	}
	defer pc.Close(context.Background())
	var lsn string
	if err := pc.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		rep.add("replica", "warn", "the primary's WAL position: %v", err)
		return
	}
	var ver string
	var standby bool
	var behind *int64
	var age *float64
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version'), pg_is_in_recovery(),
		CASE WHEN pg_is_in_recovery() THEN pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::bigint END,
		extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8`, lsn).Scan(&ver, &standby, &behind, &age)
	switch {
	case err != nil:
		rep.add("replica", "warn", "query: %v", err)
	case !standby:
		rep.add("replica", "warn", "PostgreSQL %s at %s:%d is not a standby (pg_is_in_recovery is false): is --pg-read a replica of --pg?",
			ver, conn.Config().Host, conn.Config().Port)
	case behind != nil && *behind > 0 && age != nil:
		rep.add("replica", "ok", "PostgreSQL %s standby at %s:%d, %d bytes of WAL behind the primary, last replayed transaction %.1fs ago",
			ver, conn.Config().Host, conn.Config().Port, *behind, *age)
	default:
		rep.add("replica", "ok", "PostgreSQL %s standby at %s:%d, caught up with the primary", ver, conn.Config().Host, conn.Config().Port)
	}
}

// doctorWatched says which folders serve --watch processes on this
// database watch for the index (their leases), if any.
func doctorWatched(ctx context.Context, rep *doctorReport, conn *pgx.Conn, namespace string) {
	rows, err := conn.Query(ctx, `SELECT folder, holder, expires_at > now() FROM `+watchLeaseTable+
		` WHERE namespace = $1 ORDER BY folder`, namespace)
	if err != nil {
		return // no serve --watch ever ran on this database
	}
	var lines []string
	for rows.Next() {
		var folder, holder string
		var live bool
		if rows.Scan(&folder, &holder, &live) != nil {
			continue
		}
		if live {
			lines = append(lines, fmt.Sprintf("%s (by %s)", folder, holder))
		} else {
			lines = append(lines, fmt.Sprintf("%s (its watcher %s stopped renewing: no process watches it)", folder, holder))
		}
	}
	rows.Close()
	if len(lines) > 0 {
		rep.add("watched", "info", "%s", strings.Join(lines, "; "))
	}
}

// sourceLanguages says which languages the documents are in, the most
// common first ("de 690 documents, en 3, not told 2").
func sourceLanguages(srcs []askyourdocs.Source) string {
	counts := map[string]int{}
	for _, s := range srcs {
		counts[s.Language]++
	}
	codes := slices.Collect(maps.Keys(counts))
	slices.SortFunc(codes, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(codes))
	for i, c := range codes {
		name := c
		if c == "" {
			name = "not told"
		}
		if i == 0 {
			parts = append(parts, name+" "+count(counts[c], "document", "documents"))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d", name, counts[c]))
		}
	}
	return strings.Join(parts, ", ")
}
