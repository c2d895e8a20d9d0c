//go:build mutation_notraceparent

// Mutant: The processes corral starts do not get the trace context: TRACEPARENT is not passed to the command or the agent.
// Guarantee: traces: the agent and its commands join the run's trace
// Caught: ./proc TestRunGivesTheCommandItsTraceContext
// Caught: ./cmd/corral TestOTLPHeadlessTurnIsOneTraceWithTheAgentInIt

package tracing

import "context"

// Env, mutated for the CI's mutation step (.ci/mutations): the
// environment is returned unchanged, so the child never sees the span it
// runs under. Built only with the tag mutation_notraceparent.
func Env(ctx context.Context, env []string) []string { return env }
