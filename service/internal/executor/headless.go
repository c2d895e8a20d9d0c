package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
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

func (h Headless) Run(ctx context.Context, j *Job) *corral.Outcome {
	args, err := PromptArgs(j.Agent.Command, j.Execution.Input)
	if err != nil {
		return notStarted(ctx, j, err, "")
	}
	l, err := h.Policy.prepare(j)
	if err != nil {
		return notStarted(ctx, j, err, "")
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
		Label: Label(j.Execution.ID),
	}
	turn, err := headless.Start(ctx, spec)
	if err != nil {
		return notStarted(ctx, j, startError(err, l), l.user)
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
		return notStarted(ctx, j, fmt.Errorf("the turn reported nothing: %w", err), l.user)
	}
	o := fromTurn(res)
	o.User = l.user
	end(ctx, o, res.Status == corral.StatusCancelled, stopped)
	supervision(o, err)
	return o
}

// fromTurn is the outcome a headless turn's result reports.
func fromTurn(res *headless.Result) *corral.Outcome {
	o := &corral.Outcome{
		Status:      res.Status,
		ErrorType:   res.ErrorType,
		Error:       res.Reason,
		Result:      res.Text,
		SessionID:   res.SessionID,
		NumTurns:    res.NumTurns,
		FinalizedBy: string(res.FinalizedBy),
		Signal:      res.Signal,
		Stderr:      res.StderrTail,
		StderrBytes: int64(len(res.StderrTail)),
		Duration:    res.Duration,
		ResetAt:     res.ResetAt,
	}
	if res.CostUSD != nil {
		o.CostUSD = *res.CostUSD
	}
	if res.Usage != nil {
		o.Usage, _ = json.Marshal(res.Usage)
	}
	if res.ExitCode >= 0 {
		code := res.ExitCode
		o.ExitCode = &code
	}
	if p := res.Proc; p != nil {
		o.Containment, o.Killed, o.Survivors, o.Sandbox = p.Containment, p.Killed, p.Survivors, p.Sandbox
		o.Stderr, o.StderrBytes = p.Stderr.Text(), p.Stderr.Bytes
		o.OutputTruncated = p.Stderr.Truncated
	}
	return o
}
