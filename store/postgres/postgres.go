// Package postgres is the shared store of corral's task service: one
// PostgreSQL database holding the service's tables and River's, used by
// any number of `corral serve` workers on any number of machines, with
// River (through its pgx driver) as the job engine.
//
// The rules that must hold across workers are the database's. They are
// written once, for every SQL driver, in store/internal/sqlstore; this
// package gives them the pool, the row locks and the retries below, and
// PostgreSQL's schema (timestamptz times, jsonb documents):
//
//   - Admission locks the agent's row (SELECT … FOR UPDATE) before it
//     counts the agent's slots, so admissions and releases of one agent
//     are serialized across every worker; the slots table's primary key
//     (agent, slot number) is the last guard. A transaction that loses a
//     race (a deadlock, a serialization failure, a slot taken under it) is
//     retried from the start.
//   - Claims, terminal states, cancel flags and schedule fires are
//     compare-and-set updates of one row.
//   - Migrations (River's and corral's) run under a PostgreSQL advisory
//     lock, so workers starting together apply them once.
//   - A cancel requested for a running execution is pushed to its owner
//     with NOTIFY on CancelChannel ([Store.WatchCancels]).
//
// Open takes a pgx connection URL (postgres://user@host/db?sslmode=…).
// Options.MaxConns (or pool_max_conns in the URL) bounds every
// connection the store opens, and Open refuses a bound the server would
// not accept.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/internal/schema"
	"github.com/corralrun/corral/store/internal/sqlstore"
)

//go:embed schema/*.sql
var schemaFS embed.FS

// steps is corral's schema on PostgreSQL, one file per version.
var steps = func() []schema.Step {
	s, err := schema.Steps(schemaFS, "schema")
	if err != nil {
		panic(err)
	}
	return s
}()

// migrationLock is the advisory lock key held while migrating: "corral"
// in ASCII.
const migrationLock = 0x636f7272616c

// DefaultMaxConns is the connection bound when neither Options.MaxConns,
// Options.MaxRuns nor the URL's pool_max_conns says: ConnsFor(256).
const DefaultMaxConns = 20

// MinConns is the smallest connection bound Open accepts: one for
// River's notification listener, one for the cancel watcher's LISTEN,
// which both hold theirs for as long as the store is open, and one for
// everything else.
const MinConns = 3

// ConnsFor is the default connection bound of a worker that runs at most
// maxRuns executions at once (zero means 256): the three that MinConns
// counts, one more, and one per four runs (each run uses a connection
// for a few short transactions: admission, claim, handle, end, River's
// fetch and completion), at most DefaultMaxConns.
func ConnsFor(maxRuns int) int {
	if maxRuns <= 0 {
		maxRuns = 256
	}
	return min(DefaultMaxConns, MinConns+1+(maxRuns+3)/4)
}

// Options configure Open.
type Options struct {
	// URL is the pgx connection string, e.g.
	// postgres://corral@db.internal/corral?sslmode=verify-full.
	URL string
	// MaxConns bounds every connection the store has open to the server
	// at once: its pool (transactions, the cancel watcher's LISTEN) and
	// River's notification listener, which River takes out of the pool,
	// so that the pool has MaxConns-1. A connection beyond the bound waits
	// for one to close. Zero means the URL's pool_max_conns (read as the
	// same bound), else ConnsFor(MaxRuns). At least MinConns. Open
	// refuses a bound the server, the database or the role would not
	// accept besides the connections open at that moment.
	MaxConns int
	// MaxRuns is how many executions the worker on this store runs at
	// once (service.Config.MaxRuns), for the default of MaxConns; zero
	// means 256.
	MaxRuns int
	// ApplicationName is what every connection of the store reports as
	// its application_name (pg_stat_activity), such as corral/WORKER_ID;
	// empty means the URL's application_name, else "corral". PostgreSQL
	// keeps its first 63 bytes.
	ApplicationName string
	// Logger receives River's warnings; nil discards them.
	Logger *slog.Logger
	// Limits bound the agents and schedules the store keeps (zero
	// fields: store's defaults).
	Limits store.Limits
}

// Store is a store.Store on one PostgreSQL database: it has every method of
// store.Store, those of the rules from the SQL implementation shared by
// the drivers, which it embeds, and its own Ping and Close.
type Store struct {
	*rules
	pool *pgxpool.Pool
	gate *connGate
}

type rules = sqlstore.Store[pgx.Tx]

var _ store.Store = (*Store)(nil)

// Open connects to the database at opts.URL and applies River's
// migrations and corral's schema (once, however many workers start at
// the same time).
func Open(ctx context.Context, opts Options) (_ *Store, err error) {
	if opts.URL == "" {
		return nil, errors.New("postgres store: no database URL given (postgres://USER@HOST/DB)")
	}
	cfg, gate, err := poolConfig(opts)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err = pool.Ping(pctx); err != nil {
		return nil, fmt.Errorf("postgres store: connect to %s: %w (is PostgreSQL running, and the URL, user and password right?)", redactURL(opts.URL), err)
	}
	// Before the migrations, while the pool has only the one connection
	// the ping opened.
	if err = checkCapacity(pctx, pool, cap(gate.slots)); err != nil {
		return nil, err
	}
	driver := riverpgxv5.New(pool)
	if err = migrate(ctx, pool, driver); err != nil {
		return nil, err
	}
	rules, err := sqlstore.New(sqlstore.Config[pgx.Tx]{
		DB:     &conns{pool: pool},
		River:  driver,
		Logger: opts.Logger,
		// River's insert notifications are debounced per queue; a short
		// poll keeps a lone worker's dispatch latency low.
		PollInterval: 50 * time.Millisecond,
		// One statement, one round trip: cheaper per admission than
		// River's COPY FROM (docs/benchmarks.md, River's insert).
		InsertStatement: true,
		NotifyCancel:    notifyCancel,
		Limits:          opts.Limits,
	})
	if err != nil {
		return nil, err
	}
	return &Store{rules: rules, pool: pool, gate: gate}, nil
}

// poolConfig is the pool of opts: its bound, less River's listener;
// every connection dialled through the gate of the whole bound; each
// named by the application name.
func poolConfig(opts Options) (*pgxpool.Config, *connGate, error) {
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres store: database URL: %w", err)
	}
	n := opts.MaxConns
	switch {
	case n > 0:
	case strings.Contains(opts.URL, "pool_max_conns"):
		n = int(cfg.MaxConns)
	default:
		n = ConnsFor(opts.MaxRuns)
	}
	if n < MinConns {
		return nil, nil, fmt.Errorf("postgres store: a bound of %d connections is too few: a worker holds one for River's notifications and one for cancellations, and needs one more at least (%d)", n, MinConns)
	}
	cfg.MaxConns = int32(n - 1)
	cfg.MinConns = 0
	gate := newConnGate(n, cfg.ConnConfig.DialFunc)
	cfg.ConnConfig.DialFunc = gate.Dial
	name := opts.ApplicationName
	if name == "" {
		name = cfg.ConnConfig.RuntimeParams["application_name"]
	}
	if name == "" {
		name = "corral"
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	return cfg, gate, nil
}

// migrate applies River's migrations and corral's schema under an
// advisory lock held on one connection.
func migrate(ctx context.Context, pool *pgxpool.Pool, driver *riverpgxv5.Driver) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: migrations: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("postgres store: take the migration lock: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	mig, err := rivermigrate.New(driver, nil)
	if err != nil {
		return fmt.Errorf("postgres store: river migrations: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("postgres store: apply river migrations: %w", err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS corral_schema_version (version integer NOT NULL)`); err != nil {
		return fmt.Errorf("postgres store: schema version table: %w", err)
	}
	var v int
	err = conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM corral_schema_version`).Scan(&v)
	if err != nil {
		return fmt.Errorf("postgres store: read schema version: %w", err)
	}
	if latest := schema.Latest(steps); v > latest {
		return fmt.Errorf("postgres store: database schema version %d is newer than this corral (%d): upgrade corral", v, latest)
	}
	for _, st := range schema.After(steps, v) {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, st.SQL); err != nil {
				return fmt.Errorf("postgres store: apply schema step %s: %w", st.Name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO corral_schema_version (version) VALUES ($1)`, st.Version)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// redactURL drops the password from a URL for messages.
func redactURL(u string) string {
	cfg, err := pgconn.ParseConfig(u)
	if err != nil {
		return "the database"
	}
	return fmt.Sprintf("%s@%s/%s", cfg.User, cfg.Host, cfg.Database)
}

// Close closes the pool. Stop the engine first.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Pool returns the connection pool, for tests and benchmarks that look
// underneath.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// CancelChannel is the PostgreSQL notification channel on which
// RequestCancel wakes the worker that owns a running execution; the
// payload is "WORKER_ID EXECUTION_ID".
const CancelChannel = "corral_cancel"

// notifyCancel wakes the owner of a running execution whose
// cancellation the transaction of ex requests, when it commits.
func notifyCancel(ctx context.Context, ex sqlstore.Executor, workerID, executionID string) error {
	_, err := ex.Exec(ctx, `SELECT pg_notify($1, $2)`, CancelChannel, workerID+" "+executionID)
	return err
}

// WatchCancels implements store.CancelWatcher: it listens on
// CancelChannel with one connection of the pool and calls fn with each
// execution of workerID whose cancellation was requested, until ctx is
// done or the connection fails (then the caller listens again).
func (s *Store) WatchCancels(ctx context.Context, workerID string, fn func(executionID string)) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// A connection left listening must not go back to the pool.
		conn.Conn().Close(context.Background())
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+CancelChannel); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if w, id, ok := strings.Cut(n.Payload, " "); ok && w == workerID {
			fn(id)
		}
	}
}
