package executor

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/store"
)

// Headless runs a headless agent turn (Claude Code stream-json or Codex
// exec --json) with the headless package: the agent's command template
// with the prompt substituted, finalized on the semantic end of the turn,
// with its stall, idle and budget watchdogs, as the user and in the
// environment its Policy gives (the agent's own env supplies its API
// keys). Run returns once the turn's process tree is gone, so the slot is
// released for a tree that is really over.
type Headless struct {
	Policy *Policy
}

func (h Headless) Run(ctx context.Context, j *Job) (*Result, error) {
	args, err := store.PromptArgs(j.Agent.Command, j.Execution.Input)
	if err != nil {
		return startFailure(err), nil
	}
	l, err := h.Policy.prepare(j)
	if err != nil {
		return startFailure(err), nil
	}
	var once sync.Once
	var salvage sync.WaitGroup // recorded off the stream's goroutine, waited for below
	var lastLine int64         // a line that yields several events is logged once
	defer salvage.Wait()
	spec := &headless.Spec{
		Args:         args,
		Dir:          l.dir,
		EnvMode:      corral.EnvClean,
		Env:          l.env,
		Credential:   l.cred,
		Sandbox:      l.sandbox,
		Timeout:      j.Timeout,
		StallTimeout: j.Agent.StallTimeout.D(),
		IdleTimeout:  j.Agent.IdleTimeout.D(),
		Grace:        j.Agent.Grace.D(),
		MaxOutput:    j.MaxOutput,
		MaxEventRaw:  MaxLine,
		OnStart:      j.OnStart,
		OnEvent: func(ev headless.Event) {
			if j.OnLine != nil && ev.Raw != "" && ev.Line != lastLine {
				lastLine = ev.Line
				j.OnLine("event", []byte(ev.Raw))
			}
			if ev.SessionID != "" && j.OnSalvage != nil {
				once.Do(func() {
					salvage.Add(1)
					go func() {
						defer salvage.Done()
						j.OnSalvage(ev.SessionID)
					}()
				})
			}
		},
		Label: "exec-" + j.Execution.ID,
	}
	turn, err := headless.Start(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return &Result{Status: corral.StatusInterrupted, ErrorType: corral.ErrorInterrupted, Error: "the service shut down before the turn started", Interrupted: true, User: l.user}, nil
		}
		return l.failure(startError(err, l)), nil
	}
	stopped := false
	select {
	case <-turn.Done():
	case <-j.Stop:
		stopped = true
		turn.Cancel()
	case <-ctx.Done():
		turn.Cancel()
	}
	res, err := turn.Close() // the tree is gone when Close returns
	if res == nil {
		return startFailure(err), nil
	}
	r := &Result{
		Status:      res.Status,
		ErrorType:   res.ErrorType,
		Error:       res.Reason,
		Result:      res.Text,
		SessionID:   res.SessionID,
		NumTurns:    res.NumTurns,
		FinalizedBy: string(res.FinalizedBy),
		Signal:      res.Signal,
		Stderr:      corral.Output{Head: []byte(res.StderrTail), Bytes: int64(len(res.StderrTail))},
		Duration:    res.Duration,
		User:        l.user,
	}
	if res.CostUSD != nil {
		r.CostUSD = *res.CostUSD
	}
	if res.Usage != nil {
		r.Usage, _ = json.Marshal(res.Usage)
	}
	if res.ExitCode >= 0 {
		code := res.ExitCode
		r.ExitCode = &code
	}
	if p := res.Proc; p != nil {
		r.Containment, r.Killed, r.Survivors, r.Sandbox = p.Containment, p.Killed, p.Survivors, p.Sandbox
		r.Stderr = p.Stderr
	}
	if r.Status == corral.StatusSucceeded {
		r.Error = ""
	}
	if r.Status == corral.StatusCancelled {
		switch {
		case stopped:
			r.Cancelled = true
		case ctx.Err() != nil:
			r.Interrupted = true
			r.Status, r.ErrorType, r.Error = corral.StatusInterrupted, corral.ErrorInterrupted, "the service shut down while the turn was in flight"
		}
	}
	return r, nil
}
