//go:build !mutation_proxyloopback

package egress

// allowsPort reports whether r lets port through: the port it names, or
// any when it names none. A loopback host always names its port
// (corral.Sandbox.Validate), so that no other port of the host's loopback
// is reachable through the proxy.
func (r rule) allowsPort(port int) bool { return r.port == 0 || r.port == port }
