package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/client"
)

// progress sends a waiting call's progress notifications (MCP progress,
// for a call whose request carries a progress token): one at once for
// each new state of the run (an attempt seen, started or ended), and one
// every `every` while nothing changes, which keeps alive the clients that
// reset their timeout on progress. Its goroutine ends with stop, before
// the call is answered: no notification follows the answer.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	every time.Duration
	start time.Time

	mu    sync.Mutex
	n     float64
	state string // the last state announced
	e     *client.Execution

	changed chan struct{}
	quit    chan struct{}
	done    chan struct{}
}

// startProgress starts the notifications of a call; without a progress
// token it sends none.
func startProgress(ctx context.Context, req *mcp.CallToolRequest, every time.Duration) *progress {
	p := &progress{ctx: ctx, every: every, start: time.Now(), changed: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if req != nil && req.Params != nil && req.Session != nil {
		p.ss, p.token = req.Session, req.Params.GetProgressToken()
	}
	if p.token == nil {
		close(p.done)
		return p
	}
	go p.loop()
	return p
}

// saw records a state of the run; a new one is announced at once.
func (p *progress) saw(e *client.Execution) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	p.e = e
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// stop ends the notifications and waits for the last one sent.
func (p *progress) stop() {
	if p.token == nil {
		return
	}
	close(p.quit)
	<-p.done
}

func (p *progress) loop() {
	defer close(p.done)
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-p.ctx.Done():
			return
		case <-p.changed:
			p.send(false)
		case <-t.C:
			p.send(true)
		}
	}
}

// send announces where the run stands; a beat announces it even when
// nothing changed.
func (p *progress) send(beat bool) {
	p.mu.Lock()
	e := p.e
	state := "waiting for the run's first news"
	if e != nil {
		state = fmt.Sprintf("%s attempt %d", e.ID, e.Attempt)
		if e.MaxAttempts > 1 {
			state += fmt.Sprintf("/%d", e.MaxAttempts)
		}
		state += " " + string(e.Status)
		if e.ErrorType != "" {
			state += " (" + string(e.ErrorType) + ")"
		}
		if e.RetriedBy != "" {
			state += ", retried as " + e.RetriedBy
		}
	}
	if !beat && state == p.state {
		p.mu.Unlock()
		return
	}
	p.state = state
	p.n++
	n := p.n
	p.mu.Unlock()
	msg := fmt.Sprintf("%s; waited %s", state, time.Since(p.start).Round(time.Second))
	// A client that went away gets nothing: the error is the transport's.
	p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: n, Message: msg})
}
