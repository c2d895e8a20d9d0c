//go:build mutation_waitdetached

// Mutant: a wait_execution the client cancelled goes on following its run (its event stream to the service stays open) until its timeout.
// Guarantee: MCP service tools: a wait ends when its client cancels the call
// Caught: ./mcpserver TestServiceWaitEndsWhenTheClientCancels

package mutant

const WaitDetached = true
