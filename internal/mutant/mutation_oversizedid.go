//go:build mutation_oversizedid

// Mutant: the error for an oversized stdio message carries a null id.
// Guarantee: MCP: an unreadable message fails its call at once (its own id)
// Caught: ./mcpserver TestStdioMalformedLinesGetErrorsAndTheNextRequestIsAnswered
// Caught: ./mcpserver TestConformanceTypeScriptSDKOversizedCallFailsAtOnce

package mutant

const OversizedIDDropped = true
