// Package store is the storage interface of corral's task service: agents,
// schedules, executions, capacity slots and the workers that own runs.
//
// A Store keeps every rule of the service that must hold across processes
// inside the database, so that one SQLite file or one PostgreSQL database
// shared by many `corral serve` workers gives the same guarantees:
//
//   - Admission ([Store.Submit]) is one transaction: it takes a free slot of
//     the agent (a row in a slots table whose key is agent and slot number,
//     so two workers can never hold the same slot), queues the execution, or
//     records it as rejected. Nothing is ever overbooked.
//   - Terminal states ([Store.Finish]) are written once, by compare-and-set
//     on the status: a duplicate or late completion is a no-op, cancelled is
//     sticky, and a success is never overwritten. The same transaction
//     releases exactly the execution's own slot and promotes the oldest
//     queued execution of the agent.
//   - Dispatch is durable: an admitted execution is handed to the job engine
//     in the transaction that admitted it, so a crash between the two cannot
//     lose it. A worker takes ownership with [Store.Claim].
//
// Drivers live in subpackages (store/sqlite, store/postgres) and are
// all held to the suite in store/storetest. The rules above are written
// once, in SQL, in store/internal/sqlstore; a driver gives them its
// connections, transactions, row locks and column types. The interface
// speaks of the types of this package, of the root package's vocabulary
// (corral.Status, corral.ErrorType, corral.Containment), of proc.Handle
// (the recorded handle of a run's process tree, for crash recovery) and
// of the standard library: never of a database's types.
package store
