//go:build mutation_proxyloopback

// Mutant: The proxy takes an allowed loopback host (localhost:PORT) to every port of the host's loopback.
// Guarantee: 8. confinement that holds: only the allowed host loopback ports are reachable
// Caught: ./internal/egress TestProxyReachesOnlyTheNamedLoopbackPort
// Caught: ./proc TestSandboxReachesTheAllowedHostLoopbackPortOnly

package egress

import "github.com/corralrun/corral"

// allowsPort, mutated for the CI's mutation step (.ci/mutations): a rule
// for the host's loopback lets any port through. Built only with the tag
// mutation_proxyloopback.
func (r rule) allowsPort(port int) bool {
	return r.port == 0 || r.port == port || corral.IsLoopbackHost(r.host)
}
