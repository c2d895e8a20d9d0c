// Package store is the storage interface of corral's task service: it
// stores agents, schedules, executions, capacity slots, the workers that
// own runs and web sessions. It stores only: the domain (corral.Agent,
// corral.Execution, corral.Schedule and their rules) lives in the root
// package, and the service decides what to run and drives the job engine
// (Store.Dispatcher). The interface is split by concern: Agents, Records,
// Lifecycle (admission, slots, claims, ends), Schedules, Workers,
// Sessions.
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
// speaks of the types of this package, of the root package's domain and of
// the standard library: never of a database's types, and never of the
// supervision core (a run's process handle is kept as the service wrote
// it, see Run).
package store
