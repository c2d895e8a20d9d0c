//go:build mutation_arrivalorder

// Mutant: an MCP call runs in the shell without waiting its turn in its connection's line.
// Guarantee: MCP: a session's calls run in arrival order, timeouts counted from arrival
// Caught: ./mcpserver TestStdioManyQueuedCallsRunInArrivalOrder
// Caught: ./mcpserver TestHTTPManyQueuedCallsRunInArrivalOrder

package mutant

const ArrivalOrderOff = true
