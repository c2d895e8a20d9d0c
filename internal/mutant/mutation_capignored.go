//go:build mutation_capignored

// Mutant: The capture keeps every byte: the cap is ignored.
// Guarantee: 3. bounded memory
// Caught: ./capture TestBufferMemoryStaysAtTheCap
// Caught: ./proc TestRunCapturesAFloodWithinTheCap

package mutant

// CapIgnored, mutated: the capture keeps every byte: the cap is ignored.
const CapIgnored = true
