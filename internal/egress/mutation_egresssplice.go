//go:build mutation_egresssplice

// Mutant: The proxy's relays splice TCP connections through the runtime's pipe pool: two descriptors outlive each run.
// Guarantee: no descriptor outlives its run
// Caught: ./internal/egress TestRelaysLeaveNoPipeOpen

package egress

import "io"

// relay, mutated for the CI's mutation step (.ci/mutations): io.Copy as
// is. Built only with the tag mutation_egresssplice.
func relay(dst io.Writer, src io.Reader) (int64, error) { return io.Copy(dst, src) }
