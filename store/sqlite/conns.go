package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral/store/internal/sqlstore"
)

// conns are the SQLite database as the store's rules use it
// (sqlstore.DB): writes in BEGIN IMMEDIATE transactions on the one
// writer connection, reads on the reader pool, both with cached
// statements. Times are INTEGER microseconds since the epoch in every
// column; documents are TEXT.
type conns struct {
	w        *sql.DB
	wst, rst *stmtCache
}

var _ sqlstore.DB[*sql.Tx] = (*conns)(nil)

func (d *conns) Read() sqlstore.Executor { return executor{c: d.rst} }

// Write runs the statement in a transaction of its own, so that it takes
// the write lock at once like every other write.
func (d *conns) Write(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := d.Tx(ctx, func(tx sqlstore.Tx[*sql.Tx]) error {
		var err error
		n, err = tx.Exec(ctx, query, args...)
		return err
	})
	return n, err
}

// Tx runs fn in one immediate transaction (the DSN's _txlock): it holds
// SQLite's write lock from its start, which serializes it with every
// other writer of the file, in this process or another. It is never
// retried; a writer of another process is waited for (busy_timeout).
func (d *conns) Tx(ctx context.Context, fn func(tx sqlstore.Tx[*sql.Tx]) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite store: begin: %w", err)
	}
	if err := fn(sqlstore.Tx[*sql.Tx]{Executor: executor{c: d.wst, tx: tx}, Raw: tx}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite store: commit: %w", err)
	}
	return nil
}

// Lock is empty: a transaction holds the whole database's write lock.
func (*conns) Lock(skipLocked bool) string { return "" }

// SetFields edits the document with json_set, each value read as JSON.
func (*conns) SetFields(keys []string, first int) string {
	var b strings.Builder
	b.WriteString("json_set(doc")
	for i, k := range keys {
		b.WriteString(", '$." + k + "', json($" + strconv.Itoa(first+i) + ")")
	}
	b.WriteString(")")
	return b.String()
}

// TextField reads the field with json_extract.
func (*conns) TextField(key string) string { return "json_extract(doc, '$." + key + "')" }

// Summary edits the document with json_remove and json_set; substr
// counts characters.
func (*conns) Summary(n int) string {
	cut := func(k string) string {
		return "'$." + k + "', substr(json_extract(doc, '$." + k + "'), 1, " + strconv.Itoa(n) + ")"
	}
	return "json_set(json_remove(doc, '$.stdout', '$.stderr', '$.result'), " + cut("input") + ", " + cut("error") + ", '$.summary', json('true'))"
}

func (*conns) IsUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// executor runs statements with cached prepared statements, in a
// transaction of the writer or on the reader pool, converting times to
// and from microseconds.
type executor struct {
	c  *stmtCache
	tx *sql.Tx
}

// sqlConn is a transaction or a pool.
type sqlConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// stmt returns q's cached statement (bound to the transaction), or nil
// while it is not prepared yet.
func (e executor) stmt(ctx context.Context, q string) *sql.Stmt {
	st := e.c.get(ctx, q)
	if st != nil && e.tx != nil {
		st = e.tx.StmtContext(ctx, st)
	}
	return st
}

func (e executor) conn() sqlConn {
	if e.tx != nil {
		return e.tx
	}
	return e.c.db
}

func (e executor) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	args = micros(args)
	var res sql.Result
	var err error
	if st := e.stmt(ctx, q); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = e.conn().ExecContext(ctx, q, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (e executor) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	args = micros(args)
	var r *sql.Rows
	var err error
	if st := e.stmt(ctx, q); st != nil {
		r, err = st.QueryContext(ctx, args...)
	} else {
		r, err = e.conn().QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

func (e executor) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	args = micros(args)
	if st := e.stmt(ctx, q); st != nil {
		return row{st.QueryRowContext(ctx, args...)}
	}
	return row{e.conn().QueryRowContext(ctx, q, args...)}
}

type row struct{ r *sql.Row }

func (r row) Scan(dest ...any) error { return scanMicros(r.r.Scan, dest) }

type rows struct{ *sql.Rows }

func (r rows) Scan(dest ...any) error { return scanMicros(r.Rows.Scan, dest) }
func (r rows) Close()                 { r.Rows.Close() }

// micros returns args with each time.Time as microseconds since the
// epoch, copying args only when one is there.
func micros(args []any) []any {
	copied := false
	for i, a := range args {
		if t, ok := a.(time.Time); ok {
			if !copied {
				args, copied = slices.Clone(args), true
			}
			args[i] = t.UnixMicro()
		}
	}
	return args
}

// scanMicros scans with scan, reading a *time.Time or **time.Time
// destination from microseconds since the epoch (NULL for a nil
// *time.Time), in UTC.
func scanMicros(scan func(dest ...any) error, dest []any) error {
	d := dest
	var set []func()
	for i, v := range dest {
		switch t := v.(type) {
		case *time.Time:
			var us int64
			if set == nil {
				d = slices.Clone(dest)
			}
			d[i] = &us
			set = append(set, func() { *t = time.UnixMicro(us).UTC() })
		case **time.Time:
			var us sql.NullInt64
			if set == nil {
				d = slices.Clone(dest)
			}
			d[i] = &us
			set = append(set, func() {
				*t = nil
				if us.Valid {
					v := time.UnixMicro(us.Int64).UTC()
					*t = &v
				}
			})
		}
	}
	if err := scan(d...); err != nil {
		return err
	}
	for _, f := range set {
		f()
	}
	return nil
}
