package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/shim"
)

// enclosureImpl is an enclosure on Linux: a holder (see internal/shim),
// pid 1 of the sandbox's namespaces, which forks an init per run from its
// confined thread (an init whose tree is gone is kept, idle, for the
// enclosure's next run: see initpool_linux.go).
type enclosureImpl struct {
	box    *box
	holder *initChild

	mu sync.Mutex // one spawn request at a time on the holder's socket

	poolShut bool // closing: none of its runs' inits is kept idle (under pool.mu)
}

func newEnclosure(ctx context.Context, spec EnclosureSpec) (*enclosureImpl, error) {
	b, err := newBox(spec.Sandbox, spec.Workdir, spec.Private, -1)
	if err != nil {
		return nil, fmt.Errorf("proc: %w", err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.close()
		return nil, err
	}
	defer null.Close()
	type started struct {
		c   *initChild
		err error
	}
	ch := make(chan started, 1)
	go func() {
		c, err := startInit(&spawnAttr{files: [3]*os.File{null, null, null}}, initAttr{policy: b.policy, box: b, holder: true})
		ch <- started{c, err}
	}()
	var s started
	select {
	case s = <-ch:
	case <-ctx.Done():
		s = <-ch
		if s.err == nil {
			s.c.ctl.Close()
			s.c.waitInit()
			s.c.closeFDs()
			<-s.c.reader
			s.err = ctx.Err()
		}
	}
	if s.err != nil {
		b.close()
		if !errors.Is(s.err, ErrSandboxUnavailable) && !errors.Is(s.err, context.Canceled) && !errors.Is(s.err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("proc: %w: building the enclosure: %w", ErrSandboxUnavailable, s.err)
		}
		return nil, fmt.Errorf("proc: building the enclosure: %w", s.err)
	}
	sweepBoxTmpsDue()
	return &enclosureImpl{box: b, holder: s.c}, nil
}

// spawn asks the holder for an init on the control socket ctl.
func (e *enclosureImpl) spawn(ctl *os.File) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.holder.ctl.Send(shim.Msg{Op: shim.OpSpawn}, ctl)
	if err != nil {
		return fmt.Errorf("%w: its holder is gone (%v)", ErrEnclosureClosed, err)
	}
	return nil
}

func (e *enclosureImpl) report() corral.SandboxReport {
	return *e.box.report(e.holder.mechs, e.holder.abi)
}

// close lets go of the enclosure's idle inits and ends the holder, and
// with it, pid 1 of the sandbox's namespace, every process inside; then
// the proxy and the private /tmp go.
func (e *enclosureImpl) close() error {
	shutPool(e)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.holder.ctl.Close()
	e.holder.waitInit()
	e.holder.closeFDs()
	<-e.holder.reader
	e.box.close()
	return nil
}
