//go:build mutation_noconnbound

// Mutant: the PostgreSQL store's connection gate lets every dial through, so connections taken out of the pool (River's listener) come on top of the bound.
// Guarantee: PostgreSQL connections bounded (--db-max-conns)
// Caught: ./store/postgres TestStoreNeverOpensMoreThanMaxConns

package mutant

// NoConnBound makes the store's connection gate count without bounding.
const NoConnBound = true
