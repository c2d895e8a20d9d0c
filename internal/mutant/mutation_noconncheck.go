//go:build mutation_noconncheck

// Mutant: the PostgreSQL store opens without checking that the server, the database and the role take the connections it may open.
// Guarantee: PostgreSQL connections bounded (--db-max-conns), checked at start
// Caught: ./store/postgres TestOpenRefusesWhatTheServerCannotTake
// Caught: ./cmd/corral TestServeRefusesADBMaxConnsTheServerCannotTake

package mutant

// NoConnCheck skips the store's capacity check at Open.
const NoConnCheck = true
