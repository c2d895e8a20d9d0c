package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// The pure Go SQLite spends about a third of a short transaction
// preparing its statements; the store prepares each distinct query once
// per pool and reuses it.

const maxCached = 256

// A statement seen for the first time runs uncached, and is prepared in
// the background: the writer pool's one connection is busy with the
// caller's transaction, so preparing it there and then would wait forever.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
	closed  bool
	wg      sync.WaitGroup
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if c.closed || c.pending[q] || len(c.m)+len(c.pending) >= maxCached {
		return nil
	}
	c.pending[q] = true
	c.wg.Add(1)
	go c.prepare(q)
	return nil
}

func (c *stmtCache) prepare(q string) {
	defer c.wg.Done()
	st, err := c.db.Prepare(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, q)
	if err != nil {
		return // the uncached calls report the error
	}
	if c.closed {
		st.Close()
		return
	}
	c.m[q] = st
}

// close waits for the preparations in flight and closes the statements.
func (c *stmtCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// dbq runs queries with cached statements, in a transaction of the
// writer or on the reader pool.
type dbq struct {
	c  *stmtCache
	tx *sql.Tx
}

func (s *Store) w(tx *sql.Tx) dbq { return dbq{c: s.wst, tx: tx} }
func (s *Store) r() dbq           { return dbq{c: s.rst} }

func (d dbq) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st := d.c.get(ctx, q)
	switch {
	case st != nil && d.tx != nil:
		return d.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	case st != nil:
		return st.ExecContext(ctx, args...)
	case d.tx != nil:
		return d.tx.ExecContext(ctx, q, args...)
	}
	return d.c.db.ExecContext(ctx, q, args...)
}

func (d dbq) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st := d.c.get(ctx, q)
	switch {
	case st != nil && d.tx != nil:
		return d.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	case st != nil:
		return st.QueryContext(ctx, args...)
	case d.tx != nil:
		return d.tx.QueryContext(ctx, q, args...)
	}
	return d.c.db.QueryContext(ctx, q, args...)
}

func (d dbq) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st := d.c.get(ctx, q)
	switch {
	case st != nil && d.tx != nil:
		return d.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	case st != nil:
		return st.QueryRowContext(ctx, args...)
	case d.tx != nil:
		return d.tx.QueryRowContext(ctx, q, args...)
	}
	return d.c.db.QueryRowContext(ctx, q, args...)
}
