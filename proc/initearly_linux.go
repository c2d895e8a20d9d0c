package proc

import (
	"sync/atomic"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/shim"
)

// earlyInit is a sandbox's init forked before the sandbox's box is made:
// its clone into new namespaces, its exec and its start (a millisecond or
// more, most of it the kernel's and the init's own) overlap with the box
// (the policy, the private /tmp, the egress proxy), which the init needs
// only with its run's configuration.
type earlyInit struct {
	done chan struct{}
	c    *initChild
	err  error
}

// forkEarly forks the init of a sandboxed run of a in the background, when
// it can be: a sandbox (not a guard alone) whose tier needs no cgroup leaf,
// which the init would have to be born in. It returns nil otherwise.
func forkEarly(a *spawnAttr, tier corral.Containment) *earlyInit {
	if !a.sandbox.Enabled() || tier != corral.ContainmentPidNamespace {
		return nil
	}
	earlyForks.Add(1)
	// The clone reads of a sandbox's policy only what makes its
	// namespaces (sandboxAttr): the network, and whether it is a guard's.
	// A guarded sandbox's policy is the sandbox's with the guard's paths
	// hidden (withHidden): the same namespaces.
	ia := initAttr{tier: tier, policy: &sandbox.Policy{Network: a.sandbox.Network}}
	e := &earlyInit{done: make(chan struct{}), c: &initChild{exit: make(chan struct{}), reader: make(chan struct{})}}
	go func() {
		defer close(e.done)
		ctl, shimEnd, err := shim.Pair()
		if err != nil {
			e.err = err
			return
		}
		e.c.ctl = ctl
		e.err = e.c.forkInit(a, ia, shimEnd)
		shimEnd.Close()
	}()
	return e
}

// take waits for the fork and returns the init, and why it did not
// start, if it did not (the caller undoes it: abandonInit).
func (e *earlyInit) take() (*initChild, error) {
	<-e.done
	return e.c, e.err
}

// abandon undoes the fork: the run will not start (its box could not be
// made). The init is killed and reaped before it returns.
func (e *earlyInit) abandon() {
	if e == nil {
		return
	}
	c, _ := e.take()
	if !mutant.EarlyInitLeft {
		c.abandonInit()
	}
}

// earlyForks counts the inits forked before their box (for the tests).
var earlyForks atomic.Int64
