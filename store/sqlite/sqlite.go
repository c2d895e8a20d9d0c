// Package sqlite is the embedded store of corral's task service: one
// SQLite file (pure Go, no cgo) holding the service's tables and River's,
// with River as the job engine that dispatches admitted executions.
//
// Every write runs in a BEGIN IMMEDIATE transaction through a single
// connection, so the read-modify-write steps of admission, completion and
// cancellation are serialized within the process, and SQLite's write lock
// serializes them across processes sharing the file. Plain reads (listings,
// lookups, metrics) go through a separate pool of read connections, which
// WAL mode lets run beside the writer, so they never queue admissions.
// Both pools prepare each distinct statement once and reuse it.
//
// The rules themselves (admission, slot release and promotion, claims,
// cancellation, schedule fires, listings) are written once, for every
// SQL driver, in store/internal/sqlstore; this package gives them the
// connections above, SQLite's schema, and its column types (times are
// INTEGER microseconds since the epoch, documents TEXT JSON).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/internal/schema"
	"github.com/corralrun/corral/store/internal/sqlstore"
)

//go:embed schema/*.sql
var schemaFS embed.FS

// steps is corral's schema on SQLite, one file per version.
var steps = func() []schema.Step {
	s, err := schema.Steps(schemaFS, "schema")
	if err != nil {
		panic(err)
	}
	return s
}()

// Options configure Open.
type Options struct {
	// Path is the database file; it and its directory are created if
	// missing (the directory with mode 0700).
	Path string
	// Logger receives River's warnings; nil discards them.
	Logger *slog.Logger
	// Limits bound the agents and schedules the store keeps (zero
	// fields: store's defaults).
	Limits store.Limits
}

// Store is a store.Store on one SQLite file: it has every method of
// store.Store, those of the rules from the SQL implementation shared by
// the drivers, which it embeds, and its own Ping and Close.
type Store struct {
	*rules
	db  *sql.DB // the one writer connection, shared with River
	rdb *sql.DB // readers
	wst *stmtCache
	rst *stmtCache
}

type rules = sqlstore.Store[*sql.Tx]

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database at opts.Path and applies
// River's migrations and corral's schema.
func Open(ctx context.Context, opts Options) (_ *Store, err error) {
	if opts.Path == "" {
		return nil, errors.New("sqlite store: no database path given")
	}
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite store: create data directory: %w", err)
	}
	if err := writable(filepath.Dir(opts.Path)); err != nil {
		return nil, err
	}
	if err := makePrivate(opts.Path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+opts.Path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w", opts.Path, err)
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	// One connection: SQLite allows one writer at a time, and River's
	// SQLite driver is only reliable this way.
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err = db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w (is the file a SQLite database, and the directory writable?)", opts.Path, err)
	}
	driver := riversqlite.New(db)
	if err = migrate(ctx, db, driver); err != nil {
		return nil, err
	}
	rq := url.Values{}
	rq.Add("_pragma", "busy_timeout(10000)")
	rq.Add("_pragma", "query_only(1)")
	rdb, err := sql.Open("sqlite", "file:"+opts.Path+"?"+rq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open readers: %w", err)
	}
	rdb.SetMaxOpenConns(4)
	rdb.SetMaxIdleConns(4)
	s := &Store{db: db, rdb: rdb, wst: newStmtCache(db), rst: newStmtCache(rdb)}
	s.rules, err = sqlstore.New(sqlstore.Config[*sql.Tx]{DB: &conns{w: db, wst: s.wst, rst: s.rst}, River: driver, Logger: opts.Logger, Limits: opts.Limits})
	if err != nil {
		rdb.Close()
		return nil, err
	}
	return s, nil
}

// writable checks that the database's directory takes new files (SQLite
// makes its journal there), so that a read-only directory is refused at
// once rather than at the first write.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".corral-write-check-*")
	if err != nil {
		return fmt.Errorf("sqlite store: the data directory %s is not writable (%w): the database needs it writable; remount it read-write, fix its permissions or choose another directory", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// migrate applies River's migrations, then corral's schema.
func migrate(ctx context.Context, db *sql.DB, driver *riversqlite.Driver) error {
	mig, err := rivermigrate.New(driver, nil)
	if err != nil {
		return fmt.Errorf("sqlite store: river migrations: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("sqlite store: apply river migrations: %w", err)
	}
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("sqlite store: read schema version: %w", err)
	}
	if latest := schema.Latest(steps); v > latest {
		return fmt.Errorf("sqlite store: database schema version %d is newer than this corral (%d): upgrade corral", v, latest)
	}
	for _, st := range schema.After(steps, v) {
		if err := applyStep(ctx, db, st); err != nil {
			return err
		}
	}
	return nil
}

// applyStep applies one schema step and records its version, atomically.
func applyStep(ctx context.Context, db *sql.DB, st schema.Step) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, st.SQL); err != nil {
		return fmt.Errorf("sqlite store: apply schema step %s: %w", st.Name, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", st.Version)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database. Stop the engine first.
func (s *Store) Close() error {
	s.wst.close()
	s.rst.close()
	return errors.Join(s.rdb.Close(), s.db.Close())
}

// DB returns the database handle, for tests and benchmarks that look
// underneath.
func (s *Store) DB() *sql.DB { return s.db }

// Ping implements store.Store; it uses a reader, never waiting for the
// writer.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.PingContext(ctx) }
