package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/corralrun/corral/store/internal/sqlstore"
)

// conns are the PostgreSQL database as the store's rules use it
// (sqlstore.DB): the pool, transactions retried when they lose a race
// with another worker, row locks, jsonb documents and timestamptz
// times (both of which pgx reads and writes as the rules give them).
type conns struct {
	pool *pgxpool.Pool
}

var _ sqlstore.DB[pgx.Tx] = (*conns)(nil)

func (c *conns) Read() sqlstore.Executor { return executor{c.pool} }

func (c *conns) Write(ctx context.Context, query string, args ...any) (int64, error) {
	return executor{c.pool}.Exec(ctx, query, args...)
}

// maxAttempts bounds the runs of a transaction that lost a race.
const maxAttempts = 20

// Tx runs fn in one transaction, again from the start when it lost a race
// with another worker (deadlock, serialization failure, a slot number
// taken under it), after a short random pause.
func (c *conns) Tx(ctx context.Context, fn func(tx sqlstore.Tx[pgx.Tx]) error) error {
	run := func(tx pgx.Tx) error { return fn(sqlstore.Tx[pgx.Tx]{Executor: executor{tx}, Raw: tx}) }
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, c.pool, run)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(rand.IntN(attempt*2000)+100) * time.Microsecond)
	}
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	case "23505": // unique_violation: only a slot taken under us
		return pe.ConstraintName == "corral_slots_pkey"
	}
	return false
}

func (*conns) Lock(skipLocked bool) string {
	if skipLocked {
		return " FOR UPDATE SKIP LOCKED"
	}
	return " FOR UPDATE"
}

// SetFields concatenates the document with an object of the new values.
func (*conns) SetFields(keys []string, first int) string {
	var b strings.Builder
	b.WriteString("doc || jsonb_build_object(")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + k + "', $" + strconv.Itoa(first+i) + "::jsonb")
	}
	b.WriteString(")")
	return b.String()
}

// TextField reads the field with ->>.
func (*conns) TextField(key string) string { return "doc->>'" + key + "'" }

// Summary removes keys with - and sets the cut ones with ||; left counts
// characters.
func (*conns) Summary(n int) string {
	cut := func(k string) string { return "'" + k + "', left(doc->>'" + k + "', " + strconv.Itoa(n) + ")" }
	return "(doc - 'stdout' - 'stderr' - 'result') || jsonb_build_object(" + cut("input") + ", " + cut("error") + ", 'summary', true)"
}

func (*conns) IsUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// executor runs statements on a pool or in a transaction. pgx's rows
// are the rules' rows as they are, and its no-rows error is
// sql.ErrNoRows.
type executor struct{ q querier }

func (e executor) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := e.q.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (e executor) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	return e.q.Query(ctx, q, args...)
}

func (e executor) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return e.q.QueryRow(ctx, q, args...)
}
