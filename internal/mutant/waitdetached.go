//go:build !mutation_waitdetached

package mutant

// WaitDetached, when true, lets a wait_execution of the service's MCP
// tools go on following its run after its client cancelled the call.
const WaitDetached = false
