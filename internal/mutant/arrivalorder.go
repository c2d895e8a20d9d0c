//go:build !mutation_arrivalorder

package mutant

// ArrivalOrderOff, when true, lets an MCP call that runs in the session's
// shell go ahead without waiting for the calls that arrived before it.
const ArrivalOrderOff = false
