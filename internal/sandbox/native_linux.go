package sandbox

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
)

// NativePlan is what the native init (internal/initelf) needs to build a
// sandbox as Prepare and Confine do, computed by corral from the policy:
// the native init decides nothing about the policy itself. It builds the
// same view from Roots, TmpDir, Keep and Deny; brings lo up under
// NetNone; makes the Landlock ruleset of Rules once the view is built;
// and confines the command's own process before its exec, with Filter
// and, with Gate, a notification descriptor whose first notification
// makes it execute the Go init (GoInit), which serves the gate and the
// rest of the run.
//
// It makes the listeners of the egress proxy and the host loopback ports
// as Prepare does. A guard's policy has no plan: its init is the Go one.
type NativePlan struct {
	GoInit string   // the Go init's program, opened before the view is built
	Roots  []string // the writable roots, bound read-write
	TmpDir string   // bound at /tmp
	Keep   []string // under /tmp or /var/tmp, kept reachable read-only
	Deny   []string // hidden

	NetNone bool // bring lo up, after checking no other interface is up

	// Landlock: the handled file-system rights, the scopes, the rights a
	// rule on a file (not a directory) may grant, and the rules.
	Handled, Scoped, FileRights uint64
	Rules                       []NativeRule

	Filter []byte // the seccomp program, struct sock_filter after struct sock_filter
	Gate   bool   // connect() goes to the gate (Landlock ABI below 9)

	Mechanisms  []string // what Started reports, Prepare's and Confine's
	LandlockABI int

	// Proxy says the first of Listeners is the egress proxy's; the rest
	// are the host loopback ports', in Loopback's order (as Prepare's
	// listeners are).
	Proxy     bool
	Listeners []NativeListener

	// Sockets are the policy's AllowUnixSockets: the native init hands a
	// connect to one of them to the gate, and refuses itself one to any
	// other socket the gate would refuse for lying on a read-only mount.
	Sockets []string
}

// NativeListener is a TCP listener the native init makes inside the
// sandbox's network: an IPv4 (4 bytes) or IPv6 (16 bytes) address and a
// port; an Optional one is skipped when the network lacks its address
// (localhost's ::1 without IPv6).
type NativeListener struct {
	Addr     []byte
	Port     int
	Optional bool
}

// nativeMaxPaths bounds the writable roots, allowed sockets and denied
// paths of a policy the native init builds: it holds a descriptor for each
// while it builds the view, in a table of 256 (MAXFD in its source).
const nativeMaxPaths = 200

// NativeRule grants Rights beneath Path; an Optional path may be missing.
type NativeRule struct {
	Path     string
	Rights   uint64
	Optional bool
}

// Native returns the native init's plan for p, or an error when p needs
// the Go init (a guard, more than 200 paths) or the kernel lacks what the
// sandbox needs (Probe says what). goInit is the Go init's program.
func Native(p *Policy, goInit string) (*NativePlan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Guard != nil {
		return nil, fmt.Errorf("sandbox: a guard's policy has the Go init")
	}
	if n := len(p.WritableRoots()) + len(p.AllowUnixSockets) + len(p.DenyRead); n > nativeMaxPaths {
		return nil, fmt.Errorf("sandbox: %d paths in the policy, more than the native init holds (%d): the Go init builds it", n, nativeMaxPaths)
	}
	abi, err := landlockVersion()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w: %w", ErrUnavailable, err)
	}
	gate := abi < landlockUnixABI
	filter, err := filterBytes(gate)
	if err != nil {
		return nil, err
	}
	attr, rules := landlockPlan(p, abi)
	n := &NativePlan{
		GoInit: goInit, Roots: p.WritableRoots(), TmpDir: p.TmpDir, Deny: p.DenyRead,
		NetNone: p.Network == corral.NetworkNone,
		Handled: attr.handledFS, Scoped: attr.scoped, FileRights: landlockFileRights,
		Filter: filter, Gate: gate, LandlockABI: abi, Sockets: p.AllowUnixSockets,
	}
	if mutant.NativeDenyShown {
		n.Deny = nil
	}
	keep := p.AllowUnixSockets
	if p.Mode == corral.SandboxReadOnly {
		keep = append(keep[:len(keep):len(keep)], p.Workdir) // the run starts there, even if it cannot write it
	}
	for _, k := range keep {
		if within(k, "/tmp") || within(k, "/var/tmp") {
			n.Keep = append(n.Keep, k)
		}
	}
	for _, r := range rules {
		for _, path := range r.paths {
			n.Rules = append(n.Rules, NativeRule{Path: path, Rights: r.rights, Optional: r.optional})
		}
	}
	if p.ProxyPort > 0 {
		n.Proxy = true
		n.Listeners = append(n.Listeners, NativeListener{Addr: []byte{127, 0, 0, 1}, Port: p.ProxyPort})
	}
	for _, lp := range p.Loopback {
		ips, optional := lp.addrs()
		for i, ip := range ips {
			a, err := netip.ParseAddr(ip)
			if err != nil {
				return nil, fmt.Errorf("sandbox: host loopback port %s: %w", ip, err)
			}
			n.Listeners = append(n.Listeners, NativeListener{Addr: a.Unmap().AsSlice(), Port: lp.Port, Optional: optional[i]})
		}
	}
	if mutant.NativeNoListeners {
		n.Proxy, n.Listeners = false, nil
	}
	n.Mechanisms = []string{"user namespace", "mount namespace", "pid namespace"}
	if n.NetNone {
		n.Mechanisms = append(n.Mechanisms, "network namespace")
	}
	n.Mechanisms = append(n.Mechanisms, "no_new_privs", "no capabilities", "landlock", "seccomp")
	if gate {
		n.Mechanisms = append(n.Mechanisms, "unix socket gate")
	}
	return n, nil
}

// filterBytes returns the command's seccomp program (buildFilter) in the
// kernel's layout, built once per process for each value of gate.
func filterBytes(gate bool) ([]byte, error) {
	f := filters[0]
	if gate {
		f = filters[1]
	}
	return f()
}

var filters = [2]func() ([]byte, error){
	sync.OnceValues(func() ([]byte, error) { return encodeFilter(false) }),
	sync.OnceValues(func() ([]byte, error) { return encodeFilter(true) }),
}

// encodeFilter lays out buildFilter's program as struct sock_filter: a
// u16 code, two u8 jumps, a u32 operand.
func encodeFilter(gate bool) ([]byte, error) {
	prog, err := buildFilter(gate)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	b := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		b = binary.NativeEndian.AppendUint16(b, in.Code)
		b = append(b, in.Jt, in.Jf)
		b = binary.NativeEndian.AppendUint32(b, in.K)
	}
	return b, nil
}
