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
