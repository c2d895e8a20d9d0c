//go:build !mutation_forwardport

package sandbox

import "net/netip"

// LoopbackTargets returns the host addresses a connection accepted inside
// the sandbox on local (a listener Prepare made for Loopback) is relayed
// to, in the order to try them; nil when no entry of p listens there.
func (p *Policy) LoopbackTargets(local netip.AddrPort) []string {
	ip, port := local.Addr().Unmap(), int(local.Port())
	join := func(a string) string { return netip.AddrPortFrom(netip.MustParseAddr(a), uint16(port)).String() }
	for _, lp := range p.Loopback {
		if lp.Port != port {
			continue
		}
		switch {
		case lp.Localhost && ip.String() == "127.0.0.1":
			return []string{join("127.0.0.1"), join("::1")}
		case lp.Localhost && ip.String() == "::1":
			return []string{join("::1"), join("127.0.0.1")}
		case !lp.Localhost && ip.String() == lp.IP:
			return []string{join(lp.IP)}
		}
	}
	return nil
}
