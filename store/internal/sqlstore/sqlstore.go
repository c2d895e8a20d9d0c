// Package sqlstore is the one implementation of the task service's
// storage rules — admission, slot release and promotion, claims,
// cancellation, schedule fires, workers and leases, listings — written
// once in SQL against a small interface, DB, that each database driver
// (store/sqlite, store/postgres) implements.
//
// The rules hold across processes because the database enforces them:
// every read-modify-write runs in one DB.Tx, the rows it goes on to
// change are read with the dialect's row lock (Dialect.Lock), and the
// slots table's primary key is the last guard against overbooking. A
// driver decides how its transactions serialize (SQLite's BEGIN
// IMMEDIATE, PostgreSQL's row locks) and which lost races are retried;
// the rules are written so that running a transaction again from the
// start is always safe.
//
// The SQL is written once, with PostgreSQL's numbered placeholders ($1,
// $2, …), which SQLite reads too. What still differs between databases
// is absorbed by the driver's Executor (time and document column types)
// or asked of its Dialect (row locks, editing fields of a document,
// unique violations).
//
// The package has no tests of its own: each driver runs store/storetest
// on it, with one handle and with several sharing a database.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/corralrun/corral"

	"github.com/riverqueue/river/riverdriver"

	"github.com/corralrun/corral/internal/dispatch"
	"github.com/corralrun/corral/store"
)

// Executor runs statements, inside a transaction or outside any.
//
// Arguments and results keep one type whatever the database: times are
// time.Time (an argument may be nil for NULL; a nullable column scans
// into a **time.Time), documents are JSON text (a string argument; a
// scan into *[]byte), flags are bool. Placeholders are $1, $2, … and may
// repeat.
type Executor interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement that returns at most one row. Its Scan
	// fails with an error that errors.Is sql.ErrNoRows when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Row is the result of Executor.QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of Executor.Query. Close may be called more than
// once; Err reports the error that ended the iteration.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Tx is one transaction: the executor of its statements, and the
// driver's own transaction value, which only River's insert sees (the
// dispatch commits or rolls back with the admission).
type Tx[TTx any] struct {
	Executor
	Raw TTx
}

// DB is one database as the rules use it. A driver implements it over
// its connections; TTx is its transaction type, the one its River driver
// inserts jobs with.
type DB[TTx any] interface {
	// Read returns the executor of reads outside a transaction. They see
	// committed data and must not queue behind the writers.
	Read() Executor
	// Write runs one writing statement, atomically by itself, and returns
	// the number of rows it changed.
	Write(ctx context.Context, query string, args ...any) (int64, error)
	// Tx runs fn in one transaction and commits it when fn returns nil.
	// A driver whose transactions run side by side may run fn again from
	// the start when the database reports a lost race (deadlock,
	// serialization failure, a slot number taken under it); fn sets its
	// results afresh on each call.
	Tx(ctx context.Context, fn func(tx Tx[TTx]) error) error
	Dialect
}

// Dialect is what the rules ask of a database's SQL beyond the common
// subset they are written in.
type Dialect interface {
	// Lock returns the clause that ends a SELECT of rows the transaction
	// goes on to change: it takes their row locks (" FOR UPDATE", or
	// " FOR UPDATE SKIP LOCKED" when skipLocked), or is "" on a database
	// whose write transactions are serialized whole.
	Lock(skipLocked bool) string
	// SetFields returns an SQL expression: the doc column with its
	// top-level fields keys set to the JSON values bound to the
	// parameters $first, $first+1, … (JSON text, one per key). The keys
	// are constants of this package.
	SetFields(keys []string, first int) string
	// TextField returns an SQL expression: the doc column's top-level
	// string field key (a constant of this package), NULL when absent.
	TextField(key string) string
	// Summary returns an SQL expression: the doc column of an execution
	// as a summary (corral.Execution.Summary): without the fields stdout,
	// stderr and result, with input and error cut to n characters, and
	// summary set to true.
	Summary(n int) string
	// IsUnique reports whether err is a unique constraint violation.
	IsUnique(err error) bool
}

// Config configures New.
type Config[TTx any] struct {
	// DB is the database.
	DB DB[TTx]
	// River is River's driver on the same database: admitted executions
	// are inserted as River jobs in the transaction that admits them.
	River riverdriver.Driver[TTx]
	// Logger receives River's warnings; nil discards them.
	Logger *slog.Logger
	// PollInterval is how often an idle queue of the engine looks for
	// dispatches; zero means the engine's default.
	PollInterval time.Duration
	// InsertStatement: see dispatch.Options.InsertStatement.
	InsertStatement bool
	// Limits bound the agents and schedules (zero fields: the defaults).
	Limits store.Limits
	// NotifyCancel, when set, runs inside the transaction that flags a
	// running execution for cancellation, to wake its owner at once
	// (PostgreSQL's NOTIFY is delivered on commit). The owner polls as
	// well, so it may be nil.
	NotifyCancel func(ctx context.Context, ex Executor, workerID, executionID string) error
}

// Store implements every method of store.Store but Ping and Close,
// which the driver keeps with its connections. A driver embeds it.
type Store[TTx any] struct {
	db       DB[TTx]
	engine   *dispatch.Engine[TTx]
	defaults defaultHooks
	notify   func(ctx context.Context, ex Executor, workerID, executionID string) error
	limits   store.Limits

	// The dialect's clauses and expressions, computed once.
	lock, skipLocked string
	claimFields      string
	summary, logPath string
}

// New returns the rules on cfg.DB, with a River client on cfg.River as
// their job engine.
func New[TTx any](cfg Config[TTx]) (*Store[TTx], error) {
	eng, err := dispatch.New(cfg.River, dispatch.Options{Logger: cfg.Logger, PollInterval: cfg.PollInterval, InsertStatement: cfg.InsertStatement})
	if err != nil {
		return nil, err
	}
	return &Store[TTx]{
		db:          cfg.DB,
		engine:      eng,
		notify:      cfg.NotifyCancel,
		limits:      cfg.Limits,
		lock:        cfg.DB.Lock(false),
		skipLocked:  cfg.DB.Lock(true),
		claimFields: cfg.DB.SetFields(claimKeys, 3),
		summary:     cfg.DB.Summary(corral.SummaryChars),
		logPath:     cfg.DB.TextField("log_path"),
	}, nil
}

// Dispatcher implements store.Store: the job engine on this database.
func (s *Store[TTx]) Dispatcher() store.Dispatcher { return s.engine }

// txLocal runs fn in one transaction (DB.Tx) in which fn may reserve
// local runs of promoted executions (promote) into *local; they start
// once the transaction commits, and are released when it does not, or
// when it runs again.
func (s *Store[TTx]) txLocal(ctx context.Context, fn func(tx Tx[TTx], local *dispatch.Reservations) error) error {
	var local dispatch.Reservations
	err := s.db.Tx(ctx, func(tx Tx[TTx]) error {
		local.Release()
		local = nil
		return fn(tx, &local)
	})
	if err != nil {
		local.Release()
		return err
	}
	local.Start()
	return nil
}

// lockIf returns the row-lock clause when lock is set.
func (s *Store[TTx]) lockIf(lock bool) string {
	if lock {
		return s.lock
	}
	return ""
}

// getDoc reads the document of the one row query selects by key into a
// new T: ErrNotFound, naming the record as what, when there is none.
func getDoc[T any](ctx context.Context, ex Executor, query, what, key string) (*T, error) {
	var doc []byte
	err := ex.QueryRow(ctx, query, key).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %q: %w", what, key, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal(doc, v); err != nil {
		return nil, fmt.Errorf("%s %q: corrupt record: %w", what, key, err)
	}
	return v, nil
}

// nullTime is t as an argument: nil for none.
func nullTime(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return *t
}

// each calls fn on every row of a query, then closes the rows.
func each(rows Rows, err error, fn func(Rows) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// collect reads every row of a query with scan.
func collect[T any](rows Rows, err error, scan func(Rows) (T, error)) ([]T, error) {
	var out []T
	err = each(rows, err, func(r Rows) error {
		v, err := scan(r)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}
