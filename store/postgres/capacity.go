package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/corralrun/corral/internal/mutant"
)

// capacityQuery reads, in one statement, how many more connections the
// server, the database and the role would accept besides the ones open
// now (the asking connection excluded), each -1 when unlimited:
//
//   - the server's max_connections less the slots reserved for
//     superusers (superuser_reserved_connections, and PostgreSQL 16's
//     reserved_connections), less the client connections of others;
//   - the database's CONNECTION LIMIT less its connections;
//   - the role's CONNECTION LIMIT less its connections.
const capacityQuery = `
WITH others AS (
    SELECT datname, usename FROM pg_stat_activity
    WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
)
SELECT
    current_setting('max_connections')::int
        - current_setting('superuser_reserved_connections')::int
        - coalesce(nullif(current_setting('reserved_connections', true), ''), '0')::int,
    (SELECT count(*) FROM others)::int,
    (SELECT datconnlimit FROM pg_database WHERE datname = current_database()),
    (SELECT count(*) FROM others WHERE datname = current_database())::int,
    (SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user),
    (SELECT count(*) FROM others WHERE usename = current_user)::int`

// checkCapacity refuses to go on when the server would not accept the
// want connections the store may open: better a clear error at start than
// "too many clients" under load, when the pool grows. It counts the
// connections open at this moment, so it cannot foresee other workers
// growing their pools later; the sizing rule of docs/deploy.md does.
func checkCapacity(ctx context.Context, pool *pgxpool.Pool, want int) error {
	if mutant.NoConnCheck {
		return nil
	}
	var serverCap, serverUsed, dbLimit, dbUsed, roleLimit, roleUsed int
	err := pool.QueryRow(ctx, capacityQuery).Scan(&serverCap, &serverUsed, &dbLimit, &dbUsed, &roleLimit, &roleUsed)
	if err != nil {
		return fmt.Errorf("postgres store: read the server's connection limits: %w", err)
	}
	return capacityError(want, serverCap, serverUsed, dbLimit, dbUsed, roleLimit, roleUsed)
}

// capacityError says which limit want connections would pass, or is nil.
func capacityError(want, serverCap, serverUsed, dbLimit, dbUsed, roleLimit, roleUsed int) error {
	const fix = "lower the worker's connection bound (corral serve --db-max-conns, postgres.Options.MaxConns), or raise the limit"
	if free := serverCap - serverUsed; free < want {
		return fmt.Errorf("postgres store: this worker may open %d connections, but the server takes %d more (max_connections less the reserved ones: %d; %d open by others): %s (see docs/deploy.md, Connection pooling)",
			want, max(free, 0), serverCap, serverUsed, fix)
	}
	if free := dbLimit - dbUsed; dbLimit >= 0 && free < want {
		return fmt.Errorf("postgres store: this worker may open %d connections, but the database takes %d more (its CONNECTION LIMIT %d; %d open by others): %s",
			want, max(free, 0), dbLimit, dbUsed, fix)
	}
	if free := roleLimit - roleUsed; roleLimit >= 0 && free < want {
		return fmt.Errorf("postgres store: this worker may open %d connections, but its role takes %d more (its CONNECTION LIMIT %d; %d open by others): %s",
			want, max(free, 0), roleLimit, roleUsed, fix)
	}
	return nil
}
