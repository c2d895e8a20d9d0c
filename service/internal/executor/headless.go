package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
	l, err := h.Policy.prepare(j)
	if err != nil {
		return notStarted(ctx, j, err, "")
	}
	r := h.resumeOf(ctx, j, l)
	args, err := r.args(j)
	if err != nil {
		return notStarted(ctx, j, err, l.user)
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
		Guard:        l.guard,
		Timeout:      j.Timeout,
		StallTimeout: j.Agent.StallTimeout.D(),
		IdleTimeout:  j.Agent.IdleTimeout.D(),
		Grace:        j.Agent.Grace.D(),
		MaxOutput:    j.MaxOutput,
		MaxEventRaw:  MaxLine,
		MaxCostUSD:   j.Agent.MaxCostUSD,
		MaxTokens:    j.Agent.MaxTokens,
		Prices:       h.Policy.prices(),
		OnSpend:      j.OnSpend,
		OnStart:      j.OnStart,
		OnEvent: func(ev headless.Event) {
			if j.OnLine != nil && ev.Raw != "" && ev.Line != lastLine {
				lastLine = ev.Line
				j.OnLine("event", []byte(ev.Raw))
			}
			if ev.SessionID != "" && r.capture != nil {
				r.capture.session(ev.SessionID)
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
	if r.prior != nil {
		spec.Before = before(r.prior)
	}
	turn, err := headless.Start(ctx, spec)
	if err != nil {
		r.end(nil)
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
		r.end(nil)
		return notStarted(ctx, j, fmt.Errorf("the turn reported nothing: %w", err), l.user)
	}
	o := fromTurn(res)
	o.User = l.user
	var g *corral.GuardReport
	if res.Proc != nil {
		g = res.Proc.Guard
	}
	o.Guard = l.guardReport(g)
	r.end(o)
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
		o.CostUSD, o.CostEstimated = *res.CostUSD, res.CostEstimated
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

// prices is the price table of the policy's runs.
func (p *Policy) prices() *headless.Prices {
	if p == nil {
		return nil
	}
	return p.Prices
}

// turnResume is how a headless run continues, or starts, a session: the
// session it resumes (if any, and its state as kept), and the capture of
// its own session for the next attempt.
type turnResume struct {
	cli     string
	id      string               // the session resumed; "" for a fresh start
	prior   *corral.SessionState // what was kept of it; nil when not found
	note    string               // why a resume asked for did not happen
	capture *sessionCapture
}

// resumeOf works out whether j resumes a session, restores its state for
// the run l describes, and starts capturing the run's own session when
// its agent resumes sessions.
func (h Headless) resumeOf(ctx context.Context, j *Job, l *launch) *turnResume {
	r := &turnResume{cli: agentCLI(j.Agent.Command)}
	if !j.Agent.Resume || j.Sessions == nil {
		return r
	}
	if r.cli == "" {
		r.note = "resume needs the agent's command to run claude or codex"
		return r
	}
	dir := stateDir(r.cli, l.env)
	r.capture = startCapture(j.Sessions, r.cli, dir)
	id := j.Execution.ResumeSession
	if id == "" {
		return r
	}
	st, err := j.Sessions.GetSessionState(ctx, id)
	switch {
	case err == nil:
		cwd := l.dir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		if err := restore(st, dir, cwd, l.cred); err != nil {
			r.note = fmt.Sprintf("the state of session %s could not be restored (%v): this attempt started afresh", id, err)
			return r
		}
		r.id, r.prior = id, st
	case sessionFile(r.cli, dir, id) != "":
		r.id = id // not kept, but on this machine's disk
	default:
		r.note = fmt.Sprintf("no state of session %s was kept (its attempt saved none): this attempt started afresh", id)
	}
	return r
}

// args is the command line of the turn.
func (r *turnResume) args(j *Job) ([]string, error) {
	if r.id == "" {
		return PromptArgs(j.Agent.Command, j.Execution.Input)
	}
	return resumeArgs(j.Agent.Command, r.cli, r.id, j.Agent.Retry.Prompt())
}

// end saves the session a last time and completes o (nil when the turn
// never ran): a resume that did not take is noted, and a resumed CLI's
// counts for the whole session become the attempt's own.
func (r *turnResume) end(o *corral.Outcome) {
	if r.capture != nil {
		if o != nil {
			r.capture.end(sessionTotals(o, r.prior))
		} else {
			r.capture.end(0, nil)
		}
	}
	if o == nil {
		return
	}
	o.ResumeNote = r.note
	if r.id == "" {
		return
	}
	if o.SessionID != "" && o.SessionID != r.id {
		o.ResumeNote = fmt.Sprintf("the agent started a new session (%s) instead of resuming %s", o.SessionID, r.id)
	}
}
