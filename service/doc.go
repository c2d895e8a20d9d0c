// Package service is corral's task service: named agents run tasks on
// demand or on a schedule, never more at once than their capacity, every
// run recorded, nothing lost when the service itself dies.
//
// A Service is one worker. It runs on a store.Store (store/sqlite embedded;
// a shared database for many workers) and keeps these promises:
//
//   - Admission is one atomic database operation: an agent never runs more
//     than MaxParallelTasks executions, whatever the number of workers and
//     concurrent submissions. Overflow is rejected at once (with the
//     execution recorded as rejected and ErrAtCapacity returned) or queued
//     in a durable FIFO backlog.
//   - A run releases exactly its own slot, in the transaction that writes
//     its terminal state, as soon as its process tree is gone; the same
//     transaction starts the oldest queued execution of the agent.
//   - Terminal states are written once: cancelled is sticky, a late
//     success is never overwritten by a failure, duplicates are no-ops.
//   - Every run is supervised by package proc: its whole process tree is
//     gone when it ends, and its handle (cgroup, or pid and start time) is
//     recorded as soon as it starts.
//   - When a worker dies (kill -9, a crash, a lost machine), the next
//     worker to notice (a restarted service at once; any other worker when
//     the lease expires) kills the dead worker's process trees, records
//     its runs as interrupted with what was salvaged, frees their slots
//     and lets queued work go on. Nothing queued or finished is lost.
//   - Each run's output is kept in a log file under the data directory
//     (secrets redacted), which Follow replays and then follows live; a
//     finished run replays from its file.
//
// Goroutines: Start starts a heartbeat-and-recovery loop, a cancellation
// poller, a scheduler and the job engine's workers; Close stops them all,
// stopping the runs in flight (recorded as interrupted) before it returns.
package service
