package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

// Headless runs a headless agent turn (Claude Code stream-json or Codex
// exec --json): the agent's command template with the prompt substituted.
// The turn is over when the agent says so (a result line with no
// background task pending, or Codex's turn.completed/turn.failed), not
// when the process exits; the tree is then stopped. Idle (no output) and
// stall (a tool call left open) watchdogs stop a turn that hangs.
type Headless struct{}

// PromptPlaceholder is replaced by the task input in the command template.
const PromptPlaceholder = "{{prompt}}"

// Args returns the command line of a headless agent for prompt.
func Args(template []string, prompt string) []string {
	args := make([]string, len(template))
	found := false
	for i, a := range template {
		if strings.Contains(a, PromptPlaceholder) {
			found = true
			a = strings.ReplaceAll(a, PromptPlaceholder, prompt)
		}
		args[i] = a
	}
	if !found {
		args = append(args, prompt)
	}
	return args
}

// turn is what the stream has told so far.
type turn struct {
	mu         sync.Mutex
	lastOutput time.Time
	openTools  map[string]time.Time
	background map[string]bool
	sessionID  string
	final      *finalLine
	lastText   string
	usage      json.RawMessage
	done       chan struct{}
	doneOnce   sync.Once
	watchdog   corral.ErrorType
	watchMsg   string
}

type finalLine struct {
	isError  bool
	subtype  string
	text     string
	numTurns int
	cost     float64
	usage    json.RawMessage
	errMsg   string
}

// streamLine holds the fields of both formats that matter here.
type streamLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	IsError   bool            `json:"is_error"`
	Result    string          `json:"result"`
	NumTurns  int             `json:"num_turns"`
	Cost      float64         `json:"total_cost_usd"`
	Usage     json.RawMessage `json:"usage"`
	Errors    []any           `json:"errors"`
	Message   struct {
		Content []struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
			Text      string `json:"text"`
		} `json:"content"`
	} `json:"message"`
	Tasks []struct {
		TaskID   string `json:"task_id"`
		TaskType string `json:"task_type"`
		Ambient  bool   `json:"ambient"`
	} `json:"tasks"`
	// Codex.
	ThreadID string `json:"thread_id"`
	Item     struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (t *turn) finish() { t.doneOnce.Do(func() { close(t.done) }) }

// line takes one stdout line of the stream.
func (t *turn) line(b []byte, onSalvage func(string)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastOutput = time.Now()
	var l streamLine
	if json.Unmarshal(b, &l) != nil {
		return // not JSON: counted as liveness only
	}
	newSession := ""
	switch l.Type {
	case "system":
		if l.SessionID != "" && t.sessionID == "" {
			t.sessionID, newSession = l.SessionID, l.SessionID
		}
		if l.Subtype == "background_tasks_changed" {
			t.background = map[string]bool{}
			for _, task := range l.Tasks {
				if !task.Ambient && task.TaskType != "local_bash" {
					t.background[task.TaskID] = true
				}
			}
		}
	case "assistant":
		for _, c := range l.Message.Content {
			switch c.Type {
			case "tool_use":
				t.openTools[c.ID] = time.Now()
			case "text":
				t.lastText = c.Text
			}
		}
	case "user":
		for _, c := range l.Message.Content {
			if c.Type == "tool_result" {
				delete(t.openTools, c.ToolUseID)
			}
		}
	case "result":
		if l.SessionID != "" && t.sessionID == "" {
			t.sessionID, newSession = l.SessionID, l.SessionID
		}
		t.final = &finalLine{isError: l.IsError, subtype: l.Subtype, text: l.Result, numTurns: l.NumTurns, cost: l.Cost, usage: l.Usage}
		if len(l.Errors) > 0 {
			t.final.errMsg = fmt.Sprint(l.Errors...)
		}
		if len(t.background) == 0 {
			t.finish()
		}
	case "thread.started":
		if l.ThreadID != "" && t.sessionID == "" {
			t.sessionID, newSession = l.ThreadID, l.ThreadID
		}
	case "item.started":
		if l.Item.Type != "agent_message" && l.Item.Type != "reasoning" {
			t.openTools[l.Item.ID] = time.Now()
		}
	case "item.completed":
		delete(t.openTools, l.Item.ID)
		if l.Item.Type == "agent_message" {
			t.lastText = l.Item.Text
		}
	case "turn.completed":
		t.final = &finalLine{subtype: "success", text: t.lastText, usage: l.Usage}
		t.finish()
	case "turn.failed":
		t.final = &finalLine{isError: true, subtype: "turn.failed", text: t.lastText, errMsg: l.Error.Message}
		t.finish()
	}
	if newSession != "" && onSalvage != nil {
		go onSalvage(newSession)
	}
}

// watch stops the turn when it idles or stalls.
func (t *turn) watch(idle, stall time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if idle > 0 && now.Sub(t.lastOutput) > idle {
		t.watchdog, t.watchMsg = corral.ErrorIdle, fmt.Sprintf("no output for %v", idle)
		return true
	}
	if stall > 0 {
		for id, since := range t.openTools {
			if now.Sub(since) > stall {
				t.watchdog, t.watchMsg = corral.ErrorStall, fmt.Sprintf("tool call %s open for more than %v", id, stall)
				return true
			}
		}
	}
	return false
}

func (Headless) Run(ctx context.Context, j *Job) (*Result, error) {
	t := &turn{lastOutput: time.Now(), openTools: map[string]time.Time{}, done: make(chan struct{})}
	outLines := &syncLines{}
	outLines.l.Max = MaxLine
	outLines.l.Func = func(line []byte, cut bool) {
		if j.OnLine != nil {
			j.OnLine("event", line)
		}
		if !cut {
			t.line(line, j.OnSalvage)
		}
	}
	errLines := lineWriter(j, "stderr")
	spec := &proc.Spec{
		Args:       Args(j.Agent.Command, j.Execution.Input),
		Dir:        j.Agent.Workdir,
		Env:        env(j),
		Timeout:    j.Timeout,
		Grace:      j.Agent.Grace.D(),
		MaxOutput:  j.MaxOutput,
		Stdout:     outLines,
		Stderr:     errLines,
		StopSignal: syscall.SIGINT, // agents save their session on ^C
		Label:      "exec-" + j.Execution.ID,
	}
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return startFailure(fmt.Errorf("start %s: %w", spec.Args[0], err)), nil
	}
	if j.OnStart != nil {
		j.OnStart(p.Handle())
	}
	var tick <-chan time.Time
	idle, stall := j.Agent.IdleTimeout.D(), j.Agent.StallTimeout.D()
	if idle > 0 || stall > 0 {
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		tick = tk.C
	}
	var stopped, interrupted, finalized, watchdog bool
wait:
	for {
		select {
		case <-p.Done():
			break wait
		case <-j.Stop:
			stopped = true
			p.Stop()
			break wait
		case <-ctx.Done():
			interrupted = true
			p.Stop()
			break wait
		case <-t.done:
			finalized = true
			p.Stop() // the turn is over: tear the tree down
			break wait
		case <-tick:
			if t.watch(idle, stall) {
				watchdog = true
				p.Stop()
				break wait
			}
		}
	}
	pr, _ := p.Wait()
	outLines.flush()
	errLines.flush()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !finalized {
		select {
		case <-t.done: // the result came in the last lines
			finalized = true
		default:
		}
	}
	r := &Result{SessionID: t.sessionID}
	fromProc(r, pr)
	if f := t.final; f != nil {
		r.Result, r.NumTurns, r.CostUSD, r.Usage = f.text, f.numTurns, f.cost, f.usage
	}
	switch {
	case finalized && t.final != nil:
		r.FinalizedBy = "result"
		f := t.final
		switch {
		case !f.isError && (f.subtype == "success" || f.subtype == ""):
			r.Status = corral.StatusSucceeded
		case f.subtype == "error_max_turns":
			r.Status, r.ErrorType = corral.StatusFailed, corral.ErrorMaxTurns
		case f.subtype == "error_max_budget_usd":
			r.Status, r.ErrorType = corral.StatusFailed, corral.ErrorMaxBudget
		default:
			r.Status, r.ErrorType = corral.StatusFailed, corral.ErrorStream
		}
		if r.Status != corral.StatusSucceeded {
			r.Error = cmpOr(f.errMsg, f.text, "the agent reported an error ("+f.subtype+")")
		}
	case stopped && pr.Cancelled:
		r.Cancelled = true
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusCancelled, corral.ErrorCancelled, "cancelled on request", "cancel"
	case interrupted && pr.Cancelled:
		r.Interrupted = true
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusInterrupted, corral.ErrorInterrupted, "the service shut down while the turn was in flight", "shutdown"
	case watchdog:
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusFailed, t.watchdog, t.watchMsg, string(t.watchdog)
	case pr.TimedOut:
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusFailed, corral.ErrorTimeout, fmt.Sprintf("budget of %v ran out", j.Timeout), "timeout"
	case pr.Signal != 0:
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusFailed, corral.ErrorSignal, pr.Status(), "exit"
	case pr.ExitCode == 0:
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusFailed, corral.ErrorEmptyResult, "the agent exited 0 without a result", "exit"
	default:
		r.Status, r.ErrorType, r.Error, r.FinalizedBy = corral.StatusFailed, corral.ErrorCrash, pr.Status()+" without a result", "exit"
	}
	return r, nil
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
