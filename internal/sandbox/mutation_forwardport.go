//go:build mutation_forwardport

// Mutant: The loopback relay takes a connection on any port of the sandbox's loopback to the host's same port, not only the allowed ones.
// Guarantee: 8. confinement that holds: only the allowed host loopback ports are reachable
// Caught: ./internal/sandbox TestLoopbackEntriesBecomePorts

package sandbox

import "net/netip"

// LoopbackTargets, mutated for the CI's mutation step (.ci/mutations):
// every loopback address and port is relayed to the host's, whatever the
// policy allows. Built only with the tag mutation_forwardport.
func (p *Policy) LoopbackTargets(local netip.AddrPort) []string {
	a := local.Addr().Unmap()
	if !a.IsLoopback() {
		return nil
	}
	return []string{netip.AddrPortFrom(a, local.Port()).String()}
}
