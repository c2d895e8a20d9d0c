package proc

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/egress"
	"github.com/corralrun/corral/internal/sandbox"
)

// proxyPort is where a sandbox's commands find corral's egress proxy: a
// port on 127.0.0.1 of the sandbox's own network namespace, which the
// init listens on and hands to corral (the next free one when a host
// loopback port of the sandbox takes it).
const proxyPort = 3128

// box is the host's side of one sandbox: its policy, its private /tmp, its
// egress proxy, the relay of its host loopback ports.
type box struct {
	sandbox corral.Sandbox
	policy  *sandbox.Policy
	env     []string // added to every command's environment
	proxy   *egress.Proxy
	forward *egress.Forward
	served  chan struct{}
	closed  bool
	guard   *Guard // the run's guard: its policy's, or its paths denied in the sandbox
	root    bool   // a guarded run as root
}

// newBox checks that the machine has the sandbox's mechanisms (whether
// this user may make its namespaces is the init's clone to find out:
// initCloneFailed), resolves sb for a run in workdir with the
// supervisor's private directories, and makes the private /tmp (owned by
// uid when it is not -1).
func newBox(sb corral.Sandbox, workdir string, private []string, uid int) (*box, error) {
	if err := sandbox.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSandboxUnavailable, err)
	}
	p, err := sandbox.NewPolicy(sb, workdir)
	if err != nil {
		return nil, err
	}
	for _, d := range private {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, fmt.Errorf("sandbox: private directory %s: %w", d, err)
		}
		p.Private = append(p.Private, r)
	}
	tmp, err := makeBoxTmp()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the private /tmp: %w", err)
	}
	if uid >= 0 && uid != os.Geteuid() {
		if err := os.Chown(tmp, uid, -1); err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("sandbox: the private /tmp: %w", err)
		}
	}
	p.TmpDir = tmp
	b := &box{sandbox: sb, policy: p}
	if sb.Network == corral.NetworkNone && len(p.Loopback) < len(sb.AllowHosts) {
		if b.proxy, err = egress.New(sb.AllowHosts); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		p.ProxyPort = proxyPort
		for p.LoopbackUses(p.ProxyPort) {
			p.ProxyPort++
		}
		b.env = egress.Env(fmt.Sprintf("127.0.0.1:%d", p.ProxyPort))
	}
	if len(p.Loopback) > 0 {
		b.forward = egress.NewForward()
	}
	if err := p.Validate(); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// serve runs the egress proxy and the loopback relay on the listeners the
// init made inside the sandbox's network, each known by its address.
func (b *box) serve(files []*os.File) error {
	for i, f := range files {
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			shimCloseAll(files[i+1:])
			return fmt.Errorf("sandbox: listener: %w", err)
		}
		at := l.Addr().(*net.TCPAddr).AddrPort()
		targets := b.policy.LoopbackTargets(at)
		switch {
		case b.proxy != nil && b.served == nil && at.String() == fmt.Sprintf("127.0.0.1:%d", b.policy.ProxyPort):
			b.served = make(chan struct{})
			go func() {
				defer close(b.served)
				b.proxy.Serve(l)
			}()
		case b.forward != nil && targets != nil:
			go b.forward.Serve(l, targets)
		default:
			l.Close()
			shimCloseAll(files[i+1:])
			return fmt.Errorf("sandbox: the init listens on %s, which nothing asked for", at)
		}
	}
	return nil
}

// report says what held the sandbox, with the hosts refused so far.
func (b *box) report(mechs []string, abi int) *corral.SandboxReport {
	if b.policy.Guard != nil {
		return nil // not a sandbox (see guardResult)
	}
	r := &corral.SandboxReport{
		Mode:        b.sandbox.Mode,
		Network:     b.sandbox.Network,
		Writable:    b.policy.UserWritable(),
		Mechanisms:  mechs,
		LandlockABI: abi,
	}
	if b.proxy != nil || b.forward != nil {
		r.Mechanisms = append([]string(nil), mechs...)
	}
	if b.proxy != nil {
		r.Mechanisms = append(r.Mechanisms, "egress proxy")
		r.DeniedHosts = b.proxy.Denied()
	}
	if b.forward != nil {
		r.Mechanisms = append(r.Mechanisms, "loopback forward")
	}
	return r
}

// close stops the proxy and the relay and removes the private /tmp, with what the runs
// left in it.
func (b *box) close() {
	if b.closed {
		return
	}
	b.closed = true
	if b.proxy != nil {
		b.proxy.Close()
		if b.served != nil {
			<-b.served
		}
	}
	if b.forward != nil {
		b.forward.Close()
	}
	os.RemoveAll(b.policy.TmpDir)
}
