package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/shell"
)

// Service configures the task service's tools, which let a client hand
// tasks to the service's agents: list_agents, submit_task,
// wait_execution, get_execution, execution_logs, cancel_execution and
// list_executions. They talk to the service only through Client, its
// HTTP API; the server runs nothing itself. Every text they return (a
// run's result, output, log, input) is cleaned and cut to a budget of
// characters as run_command's output is (shell.CleanForModel,
// ClipForModel), every request to the service has a deadline, and a wait
// ends when its client cancels the call or the server shuts down.
type Service struct {
	// Client talks to the service. Required. Its HTTP client should have
	// no overall timeout (a wait holds an event stream open): every
	// request gets its own deadline here.
	Client *client.Client
	// MaxOutputChars is the character budget of a result when the call
	// gives none; zero means shell.DefaultMaxOutputChars. OutputCharsCap
	// caps what a call may ask for in max_output_chars; zero means
	// shell.DefaultOutputCharsCap.
	MaxOutputChars, OutputCharsCap int
	// Wait is how long wait_execution waits when the call gives no
	// timeout_ms; zero means DefaultWait. MaxWait caps what a call may ask
	// for; zero means DefaultMaxWait.
	Wait, MaxWait time.Duration
	// ProgressEvery is how often a wait whose call carries a progress
	// token sends a progress notification while nothing changes; zero
	// means 5 s. A change (the run started, an attempt ended) is sent at
	// once.
	ProgressEvery time.Duration
	// CallTimeout bounds each request to the service other than a wait's
	// event stream; zero means 30 s.
	CallTimeout time.Duration
}

// Defaults of Service's zero fields.
const (
	// DefaultWait is under the 60 s that the MCP TypeScript SDK and
	// Codex give a tool call by default, so that a wait with no timeout
	// answers before a client that ignores progress gives up on it.
	DefaultWait    = 50 * time.Second
	DefaultMaxWait = 10 * time.Minute
)

// positive returns v, or def when v is not positive: none of Service's
// bounds can be turned off.
func positive[T ~int | ~int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// charsCap is the largest budget a call may ask for; it is never below
// the default budget.
func (v *Service) charsCap() int {
	return max(positive(v.OutputCharsCap, shell.DefaultOutputCharsCap), positive(v.MaxOutputChars, 0))
}

// chars is the character budget of a call that asked for asked, with a
// note when the cap was used instead.
func (v *Service) chars(asked Count) (int, []string) {
	c := v.charsCap()
	switch {
	case asked <= 0:
		return positive(v.MaxOutputChars, shell.DefaultMaxOutputChars), nil
	case int64(asked) > int64(c):
		return c, []string{fmt.Sprintf("max_output_chars %d is above the maximum; %d was used", asked, c)}
	}
	return int(asked), nil
}

func (v *Service) maxWait() time.Duration { return positive(v.MaxWait, DefaultMaxWait) }

// wait is how long a call that asked for asked milliseconds waits, with a
// note when the maximum was used instead.
func (v *Service) wait(asked Count) (time.Duration, []string) {
	maxW := v.maxWait()
	switch d := millis(int64(asked)); {
	case asked <= 0:
		return min(positive(v.Wait, DefaultWait), maxW), nil
	case d > maxW:
		return maxW, []string{fmt.Sprintf("timeout_ms %d is above the maximum; %d was used", asked, maxW.Milliseconds())}
	default:
		return d, nil
	}
}

func (v *Service) progressEvery() time.Duration { return positive(v.ProgressEvery, 5*time.Second) }

// call bounds one request to the service.
func (v *Service) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, positive(v.CallTimeout, 30*time.Second))
}

const serviceInstructions = `corral's task service runs tasks on named agents (shell commands, or headless coding agents such as Claude Code) with capacity limits, retries and budgets. Delegate with submit_task (it returns an execution id at once), then wait_execution to get the result; list_agents names the agents. A run may take several attempts: wait_execution follows them to the last.`

// Inputs of the service's tools.
type (
	// SubmitInput is submit_task's input.
	SubmitInput struct {
		Agent     string `json:"agent" jsonschema:"the agent that runs the task: list_agents names them"`
		Input     string `json:"input" jsonschema:"the task: a shell agent's command line, or a headless agent's prompt"`
		TimeoutMS Count  `json:"timeout_ms,omitempty" jsonschema:"budget of the run in milliseconds; omit for the agent's own"`
	}
	// WaitInput is wait_execution's input.
	WaitInput struct {
		ID             string `json:"id" jsonschema:"the execution id that submit_task returned, or that of any attempt of the run"`
		TimeoutMS      Count  `json:"timeout_ms,omitempty" jsonschema:"how long to wait, in milliseconds; omit for the default; capped at the maximum. The run goes on when the wait times out: call wait_execution again"`
		MaxOutputChars Count  `json:"max_output_chars,omitempty" jsonschema:"character budget for the result, stdout and stderr together (head and tail are kept); omit for the default; capped at the maximum"`
	}
	// ExecutionInput names an execution.
	ExecutionInput struct {
		ID             string `json:"id" jsonschema:"the execution id"`
		MaxOutputChars Count  `json:"max_output_chars,omitempty" jsonschema:"character budget for the result, stdout and stderr together; omit for the default; capped at the maximum"`
	}
	// CancelInput is cancel_execution's input.
	CancelInput struct {
		ID string `json:"id" jsonschema:"the execution id of any attempt of the run to cancel"`
	}
	// LogsInput is execution_logs' input.
	LogsInput struct {
		ID             string `json:"id" jsonschema:"the execution id (one attempt: each attempt has its own log)"`
		Tail           Count  `json:"tail,omitempty" jsonschema:"how many of the last log records to return; omit for 50; at most 1000"`
		After          Count  `json:"after,omitempty" jsonschema:"return only the records after this seq (the last_seq of a previous call) to read on"`
		MaxOutputChars Count  `json:"max_output_chars,omitempty" jsonschema:"character budget for the records' text together (the latest are kept); omit for the default; capped at the maximum"`
	}
	// ListInput is list_executions' input.
	ListInput struct {
		Agent  string `json:"agent,omitempty" jsonschema:"only this agent's executions"`
		Status string `json:"status,omitempty" jsonschema:"only these statuses, comma-separated: queued, waiting, running, succeeded, failed, cancelled, rejected, interrupted"`
		Limit  Count  `json:"limit,omitempty" jsonschema:"how many, newest first; omit for 20; at most 100"`
		Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of a previous call, to read the next page"`
	}
)

// AgentList is list_agents' output.
type AgentList struct {
	Agents []AgentView `json:"agents"`
	Notes  []string    `json:"notes,omitempty"`
}

// ExecutionList is list_executions' output.
type ExecutionList struct {
	Executions []ExecutionView `json:"executions"`
	NextCursor string          `json:"next_cursor,omitempty" jsonschema:"pass as cursor to read the next page; absent on the last"`
	Notes      []string        `json:"notes,omitempty"`
}

func (s *Server) addServiceTools() {
	v := s.svc
	def, _ := v.chars(0)
	capChars := v.charsCap()
	wait, _ := v.wait(0)
	maxWait := v.maxWait()
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "list_agents",
		Description:  "List the agents of corral's task service that tasks can be submitted to: name, kind (shell: the input is a command line; headless: the input is a prompt for a coding agent), the command a headless agent runs, capacity (max_parallel_tasks; overflow reject refuses a task when every slot is taken, queue keeps it waiting), the run's default timeout, and the retry policy (max_attempts, retry_on).",
		OutputSchema: schema[AgentList](),
	}, s.listAgents)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "submit_task",
		Description: `Submit a task to an agent of corral's task service and return at once with its execution id (id) and status: running, or queued when the agent's slots are all taken and it queues. It does not wait: call wait_execution with the id to get the result.

- An agent at capacity that does not queue refuses the task: the result is an error saying so (N/N slots taken); try again later or pick another agent.
- timeout_ms is the run's budget; omit it for the agent's own.
- The agent's retry policy may run a failed task again (a new attempt with its own id); wait_execution follows the attempts.`,
		InputSchema:  schema[SubmitInput](),
		OutputSchema: schema[ExecutionView](),
	}, s.submitTask)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "wait_execution",
		Description: fmt.Sprintf(`Wait for a run of corral's task service to end and return its outcome: status (succeeded, failed, cancelled, rejected, interrupted), result (a headless agent's final answer), stdout and stderr (head and tail), exit_code, error_type and error, cost_usd (this attempt) and chain_cost_usd (every attempt).

- The run goes through its retry attempts: when an attempt fails and its agent retries it, the wait follows the next attempt (named in retried_by, waiting for its time as status waiting) to the last. The result is the last attempt's, with id its id; attempts lists those the wait saw.
- Timeout: %d ms by default, at most %d ms (timeout_ms). When it passes, timed_out is true, finished is false and the run goes on: call wait_execution again with the id in the result, or cancel_execution.
- finished is true once the run is over: its last attempt ended and no further attempt follows.
- Output: result, stdout and stderr together are limited to %d characters (max_output_chars, at most %d); the beginning and the end are kept. execution_logs reads the run's log.
- While it waits it sends progress notifications to clients that ask for them.`, wait.Milliseconds(), maxWait.Milliseconds(), def, capChars),
		InputSchema:  schema[WaitInput](),
		OutputSchema: schema[WaitResult](),
	}, s.waitExecution)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "get_execution",
		Description:  "Return an execution of corral's task service as it stands now, without waiting: status, result, stdout and stderr (head and tail, within max_output_chars), error_type, cost, attempt of max_attempts, and retried_by when this attempt failed and was retried (wait_execution follows the run to its last attempt).",
		InputSchema:  schema[ExecutionInput](),
		OutputSchema: schema[ExecutionView](),
	}, s.getExecution)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "execution_logs",
		Description:  "Return the last records of an execution's log (tail, 50 by default): each with seq, stream (stdout, stderr, event: a line of a headless agent's stream, system: corral's notes) and text, terminal escapes removed. The records' text together is kept within max_output_chars, the latest first; omitted counts the earlier records left out. Pass after (the last_seq of a previous call) to read only what came since. It does not wait for more.",
		InputSchema:  schema[LogsInput](),
		OutputSchema: schema[LogsResult](),
	}, s.executionLogs)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "cancel_execution",
		Description:  "Cancel a run of corral's task service: its latest attempt is stopped (a queued or waiting one at once, a running one gracefully, its whole process tree), and no further attempt is made. Returns the execution as it stands: status cancelled, or running with cancel_requested until its tree is gone (wait_execution returns its end). An error if the run has already finished.",
		InputSchema:  schema[CancelInput](),
		OutputSchema: schema[ExecutionView](),
	}, s.cancelExecution)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "list_executions",
		Description:  "List executions of corral's task service, newest first, as summaries (id, agent, status, attempt, error_type, input cut short, times): filter by agent and status (comma-separated), read on with cursor. get_execution returns one whole.",
		InputSchema:  schema[ListInput](),
		OutputSchema: schema[ExecutionList](),
	}, s.listExecutions)
}

// checkID refuses an empty execution id before it reaches the service.
func checkID(id string) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("id is empty: pass the execution id that submit_task returned (list_executions lists them)")
	}
	return nil
}

// serviceError says what a failed request to the service means for the
// model.
func serviceError(what, id string, err error) error {
	var ae *client.Error
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound && id != "":
		return fmt.Errorf("no execution %q in corral's task service: use the id submit_task returned (list_executions lists them)", id)
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		return fmt.Errorf("%s: %s; the task was not run: try again once a run of the agent has finished, or pick another agent", what, ae.Message)
	case errors.As(err, &ae):
		return fmt.Errorf("%s: the service answered: %s", what, ae.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: corral's task service did not answer in time: try again", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (s *Server) listAgents(ctx context.Context, _ *mcp.CallToolRequest, _ Empty) (*mcp.CallToolResult, *AgentList, error) {
	cctx, cancel := s.svc.call(ctx)
	defer cancel()
	agents, err := s.svc.Client.Agents(cctx)
	if err != nil {
		return nil, nil, serviceError("list_agents", "", err)
	}
	budget, _ := s.svc.chars(0)
	out := &AgentList{Agents: []AgentView{}}
	used := 0
	for i, a := range agents {
		av := agentView(a)
		if used += viewSize(av); used > budget && i > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d more agents are not shown: the list is longer than %d characters", len(agents)-i, budget))
			break
		}
		out.Agents = append(out.Agents, av)
	}
	return nil, out, nil
}

func (s *Server) submitTask(ctx context.Context, _ *mcp.CallToolRequest, in SubmitInput) (*mcp.CallToolResult, *ExecutionView, error) {
	if strings.TrimSpace(in.Agent) == "" {
		return nil, nil, errors.New("agent is empty: name one of the agents list_agents returns")
	}
	if in.TimeoutMS < 0 {
		return nil, nil, errors.New("timeout_ms must not be negative")
	}
	cctx, cancel := s.svc.call(ctx)
	defer cancel()
	e, err := s.svc.Client.Submit(cctx, in.Agent, in.Input, millis(int64(in.TimeoutMS)))
	if err != nil {
		return nil, nil, serviceError("submit_task to agent "+in.Agent, "", err)
	}
	budget, _ := s.svc.chars(0)
	v := executionView(e, budget, true)
	v.Notes = append(v.Notes, "submitted: call wait_execution with id "+e.ID+" for the result")
	return nil, &v, nil
}

func (s *Server) getExecution(ctx context.Context, _ *mcp.CallToolRequest, in ExecutionInput) (*mcp.CallToolResult, *ExecutionView, error) {
	if err := checkID(in.ID); err != nil {
		return nil, nil, err
	}
	budget, notes := s.svc.chars(in.MaxOutputChars)
	cctx, cancel := s.svc.call(ctx)
	defer cancel()
	e, err := s.svc.Client.Execution(cctx, in.ID)
	if err != nil {
		return nil, nil, serviceError("get_execution", in.ID, err)
	}
	v := executionView(e, budget, false)
	v.Notes = append(notes, v.Notes...)
	return nil, &v, nil
}

func (s *Server) cancelExecution(ctx context.Context, _ *mcp.CallToolRequest, in CancelInput) (*mcp.CallToolResult, *ExecutionView, error) {
	if err := checkID(in.ID); err != nil {
		return nil, nil, err
	}
	cctx, cancel := s.svc.call(ctx)
	defer cancel()
	e, err := s.svc.Client.Cancel(cctx, in.ID)
	var ae *client.Error
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		return nil, nil, fmt.Errorf("cancel_execution: %s: the run has already finished (get_execution shows how)", ae.Message)
	}
	if err != nil {
		return nil, nil, serviceError("cancel_execution", in.ID, err)
	}
	budget, _ := s.svc.chars(0)
	v := executionView(e, budget, true)
	return nil, &v, nil
}

// Bounds of list_executions.
const (
	defaultListLimit = 20
	maxListLimit     = 100
)

func (s *Server) listExecutions(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, *ExecutionList, error) {
	o := client.ListOptions{Agent: in.Agent, Cursor: in.Cursor, Limit: defaultListLimit}
	if in.Limit > 0 {
		o.Limit = int(min(in.Limit, maxListLimit))
	}
	for _, st := range strings.Split(in.Status, ",") {
		if st = strings.TrimSpace(st); st == "" {
			continue
		}
		p, err := corral.ParseStatus(st)
		if err != nil {
			return nil, nil, err
		}
		o.Statuses = append(o.Statuses, p)
	}
	cctx, cancel := s.svc.call(ctx)
	defer cancel()
	list, next, err := s.svc.Client.Executions(cctx, o)
	if err != nil {
		return nil, nil, serviceError("list_executions", "", err)
	}
	budget, _ := s.svc.chars(0)
	out := &ExecutionList{Executions: []ExecutionView{}, NextCursor: next}
	if in.Limit > maxListLimit {
		out.Notes = append(out.Notes, fmt.Sprintf("limit %d is above the maximum; %d was used", in.Limit, maxListLimit))
	}
	used := 0
	for i, e := range list {
		v := summaryView(e)
		if used += viewSize(v); used > budget && i > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d more executions of this page are not shown: the list is longer than %d characters; ask for a smaller limit", len(list)-i, budget))
			break
		}
		out.Executions = append(out.Executions, v)
	}
	return nil, out, nil
}
