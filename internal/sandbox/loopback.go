package sandbox

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/corralrun/corral"
)

// MaxLoopbackPorts bounds the host loopback ports one sandbox forwards:
// each is a listener (two for localhost) that the init hands to corral.
const MaxLoopbackPorts = 16

// LoopbackPort is one port of the host's loopback that a sandbox with
// network none reaches at the same address: the init listens on it inside
// the sandbox's network namespace and hands the listener to corral, which
// relays each connection to the host's port. No other port of the host's
// loopback is reachable. The relay is TCP, byte for byte both ways, so it
// serves clients that ignore proxy variables too.
type LoopbackPort struct {
	// Port is the port, the same inside and on the host.
	Port int `json:"port"`

	// IP is the loopback address (127.0.0.0/8 or ::1, canonical) listened
	// on inside and dialled on the host. Empty with Localhost.
	IP string `json:"ip,omitempty"`

	// Localhost: the entry named localhost. The init listens on
	// 127.0.0.1 and, when the namespace has IPv6, on ::1; corral dials the
	// host's port on the address the connection came to, then on the
	// other one, so that a client that picks ::1 reaches a service that
	// listens on 127.0.0.1 only (and the reverse).
	Localhost bool `json:"localhost,omitempty"`
}

// loopbackPorts returns the entries of allow that name the host's
// loopback (corral.IsLoopbackHost), one LoopbackPort per address and port
// in the order given: an address that a localhost entry of the same port
// covers is dropped.
func loopbackPorts(allow []string) ([]LoopbackPort, error) {
	var out []LoopbackPort
	for _, entry := range allow {
		host, port, err := corral.SplitAllowedHost(entry)
		if err != nil {
			return nil, err
		}
		if !corral.IsLoopbackHost(host) {
			continue
		}
		lp := LoopbackPort{Port: port, Localhost: host == "localhost"}
		if !lp.Localhost {
			a, _ := netip.ParseAddr(trimBrackets(host))
			lp.IP = a.Unmap().String()
		}
		out = append(out, lp)
	}
	kept := out[:0]
	for _, lp := range out {
		covered := false
		for _, k := range out {
			if k.Port == lp.Port && k.Localhost && !lp.Localhost && (lp.IP == "127.0.0.1" || lp.IP == "::1") {
				covered = true
			}
		}
		for _, k := range kept {
			if k == lp {
				covered = true
			}
		}
		if !covered {
			kept = append(kept, lp)
		}
	}
	return kept, nil
}

func trimBrackets(s string) string {
	if len(s) > 1 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}

// addrs returns the addresses the init listens on for lp, and whether
// each may be missing (localhost's ::1 in a namespace without IPv6).
func (lp LoopbackPort) addrs() (ips []string, optional []bool) {
	if lp.Localhost {
		return []string{"127.0.0.1", "::1"}, []bool{false, true}
	}
	return []string{lp.IP}, []bool{false}
}

// LoopbackUses reports whether some entry of p.Loopback listens on
// 127.0.0.1:port inside the sandbox (where the proxy would listen).
func (p *Policy) LoopbackUses(port int) bool {
	for _, lp := range p.Loopback {
		if lp.Port == port && (lp.Localhost || lp.IP == "127.0.0.1") {
			return true
		}
	}
	return false
}

// validateLoopback checks p.Loopback: network none, at most
// MaxLoopbackPorts entries, loopback addresses, ports in range, no
// address listened on twice, the proxy's port left to the proxy.
func (p *Policy) validateLoopback() error {
	if len(p.Loopback) == 0 {
		return nil
	}
	if p.Network != corral.NetworkNone {
		return fmt.Errorf("sandbox: host loopback ports are forwarded under network none; network host reaches them already")
	}
	if len(p.Loopback) > MaxLoopbackPorts {
		return fmt.Errorf("sandbox: %d host loopback ports allowed, at most %d", len(p.Loopback), MaxLoopbackPorts)
	}
	seen := map[string]bool{}
	for _, lp := range p.Loopback {
		if lp.Port < 1 || lp.Port > 65535 {
			return fmt.Errorf("sandbox: host loopback port %d out of range", lp.Port)
		}
		if lp.Localhost != (lp.IP == "") {
			return fmt.Errorf("sandbox: host loopback port %d: want an IP or localhost, not both", lp.Port)
		}
		if !lp.Localhost {
			a, err := netip.ParseAddr(lp.IP)
			if err != nil || !a.IsLoopback() || a.String() != lp.IP {
				return fmt.Errorf("sandbox: host loopback port %d: %q is not a canonical loopback address", lp.Port, lp.IP)
			}
		}
		ips, _ := lp.addrs()
		for _, ip := range ips {
			key := ip + "/" + strconv.Itoa(lp.Port)
			if seen[key] {
				return fmt.Errorf("sandbox: host loopback port %s:%d listed twice", ip, lp.Port)
			}
			seen[key] = true
		}
		if p.ProxyPort > 0 && p.LoopbackUses(p.ProxyPort) {
			return fmt.Errorf("sandbox: host loopback port %d is the egress proxy's inside the sandbox", p.ProxyPort)
		}
	}
	return nil
}
