package mcpserver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/shell"
)

// RunInput is run_command's input.
type RunInput struct {
	Command        string `json:"command" jsonschema:"the shell command line to run in bash; may span several lines"`
	TimeoutMS      Count  `json:"timeout_ms,omitempty" jsonschema:"timeout in milliseconds; omit for the default; capped at the maximum; for a background job, omit for none"`
	Workdir        string `json:"workdir,omitempty" jsonschema:"run this one command in this directory; the session's own directory does not change"`
	Background     bool   `json:"background,omitempty" jsonschema:"start the command as a background job and return at once with its job_id; read it with job_output, stop it with job_kill"`
	MaxOutputChars Count  `json:"max_output_chars,omitempty" jsonschema:"character budget for stdout and stderr together (head and tail are kept); omit for the default; capped at the maximum"`
}

// Count is an integer from a client: any JSON integer is accepted, and one
// beyond what an int64 holds (1e300) saturates instead of failing, since
// every count the tools take has a maximum anyway.
type Count int64

// UnmarshalJSON reads any JSON number, saturating at the int64 range.
func (c *Count) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("want a number: %w", err)
	}
	switch {
	case f >= math.MaxInt64:
		*c = math.MaxInt64
	case f <= math.MinInt64:
		*c = math.MinInt64
	default:
		*c = Count(f)
		if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			*c = Count(i) // exact where float64 is not
		}
	}
	return nil
}

// JobInput names a job.
type JobInput struct {
	JobID string `json:"job_id" jsonschema:"the job_id that run_command returned"`
}

// JobOutputInput is job_output's input.
type JobOutputInput struct {
	JobID  string `json:"job_id" jsonschema:"the job_id that run_command returned"`
	Since  *int64 `json:"since,omitempty" jsonschema:"output offset to read from (the next value of a previous call); omit to get what is new since your last read"`
	WaitMS Count  `json:"wait_ms,omitempty" jsonschema:"if there is no new output yet, wait up to this many milliseconds for some or for the job to end (at most 60000)"`
}

// Empty is the input of tools without parameters.
type Empty struct{}

// JobList is list_jobs' output.
type JobList struct {
	Jobs []shell.JobInfo `json:"jobs"`
}

// ResetOutput is reset_session's output.
type ResetOutput struct {
	Cwd string `json:"cwd"`
}

func (s *Server) addTools() {
	t := s.tool
	lim := t.Limits()
	def, maxT, chars, capChars := lim.Timeout.Milliseconds(), lim.MaxTimeout.Milliseconds(), lim.MaxOutputChars, lim.OutputCharsCap
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "run_command",
		Description: fmt.Sprintf(`Run a shell command in this connection's persistent bash session and return its exit code, stdout and stderr.

State carries over between calls: the working directory (cd), exported and plain variables, functions, aliases and shell options. The session survives timeouts, exit, set -e failures and syntax errors; if a command's shell is killed hard, the result says session_restarted and the session continues from the state before that command.

- stdin is empty (/dev/null): interactive prompts get end-of-file, so pass flags such as -y / --yes / --no-pager.
- Timeout: %d ms by default, at most %d ms (timeout_ms). On timeout the command's whole process tree is stopped and timed_out is true; the output shows what it printed before. Rerun with a larger timeout_ms, or use background.
- Output: stdout and stderr together are limited to %d characters (max_output_chars, at most %d); the beginning and the end are kept. When truncated is true, full_output_path names a file holding all of it: search it with grep or read parts with sed -n / tail instead of rerunning.
- The command itself is at most %d bytes: write longer scripts to a file and run the file.
- Commands of the session run one at a time, in the order they were sent; time spent waiting for the previous one counts against the timeout (waited_ms).
- Processes started with & end when the command ends. For servers, watchers and long builds set background: true; then read their output with job_output and stop them with job_kill.
- The result is one JSON object. corral sets its fields: exit_code (-1 when a signal ended the command, named in signal), timed_out, truncated and full_output_path, stdout_bytes and stderr_bytes, duration_ms, cwd (the session's directory after the command), notes, session_restarted, job_id, and for a refused command denied and reason. The command's own output is only ever inside the strings stdout and stderr, with terminal escape sequences and other control characters removed: nothing it prints can pass for a field.`, def, maxT, chars, capChars, MaxCommandBytes),
		OutputSchema: schema[shell.Result](),
	}, s.runCommand)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "job_output",
		Description:  "Read the output of a background job that run_command started with background: true. Returns a JSON object: output (stdout and stderr interleaved, terminal escapes removed) produced since your last read, or since the offset `since`; `next` (the offset to continue from); and the job's status: running, exited (with exit_code), killed or timed_out. Set wait_ms to wait for new output or for the job to end instead of polling with sleep. Long output keeps its beginning and end; the job's complete log is at log_path.",
		InputSchema:  schema[JobOutputInput](),
		OutputSchema: schema[shell.JobOutput](),
	}, s.jobOutput)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "job_kill",
		Description:  "Stop a background job and its whole process tree (SIGTERM, then SIGKILL after a grace period) and return its final status. Jobs also end when the session is reset or the connection closes.",
		OutputSchema: schema[shell.JobInfo](),
	}, s.jobKill)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "list_jobs",
		Description:  "List this session's background jobs, running and ended: job_id, command, status (running, exited, killed, timed_out), pid, exit_code, output size and log_path.",
		OutputSchema: schema[JobList](),
	}, s.listJobs)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "reset_session",
		Description: "Start the shell session afresh: stops all background jobs and resets the working directory, environment, variables, functions, aliases and options to their initial state. Use it when the session's state is broken; a failed or timed-out command does not need it.",
	}, s.resetSession)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:         "environment",
		Description:  "Describe where commands run: OS and architecture, the shell and its version, the session's current working directory, versions of common tools (git, go, node, python3, …, or \"not found\"), and the timeout and output limits. Call it once before planning commands.",
		OutputSchema: schema[shell.Environment](),
	}, s.environment)
}

// Every tool answers with one JSON object, its structured content. The
// SDK puts the same JSON in the text content, as the protocol asks, so
// that a model reads the same thing whichever of the two its client hands
// it: Claude Code gives the model the structured content, other clients
// the text. Command output sits in JSON strings, so nothing a command
// prints can pass for a field of the result.

// schema infers a tool's input or output schema as the SDK would, but
// with no "null" in the types of its properties: the pointer and slice
// fields behind them are omitted when empty, never null, and a single type
// keeps the schema portable to clients that map schemas onto one-type
// dialects (and valid under Ajv's strict mode).
func schema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	noNull(s)
	return s
}

func noNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		s.Type = s.Types[slices.IndexFunc(s.Types, func(t string) bool { return t != "null" })]
		s.Types = nil
	}
	for _, p := range s.Properties {
		noNull(p)
	}
	noNull(s.Items)
}

// MaxCommandBytes is the longest command run_command takes, on both
// transports.
const MaxCommandBytes = 1 << 20

// millis converts a count of milliseconds from a client, saturating rather
// than overflowing.
func millis(ms int64) time.Duration {
	if ms > int64(math.MaxInt64/time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

func (s *Server) runCommand(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, *shell.Result, error) {
	if in.TimeoutMS < 0 || in.MaxOutputChars < 0 {
		return nil, nil, fmt.Errorf("timeout_ms and max_output_chars must not be negative")
	}
	if len(in.Command) > MaxCommandBytes {
		return nil, nil, fmt.Errorf("the command is %d bytes; the limit is %d (1 MiB): write a long script to a file and run the file", len(in.Command), MaxCommandBytes)
	}
	c := callOf(ctx)
	if in.Background {
		c.setFree()
	} else if err := awaitTurn(ctx); err != nil {
		return nil, nil, err
	}
	sh, err := s.session(ctx, req.Session)
	if err != nil {
		return nil, nil, err
	}
	r := shell.Request{
		Command:        in.Command,
		Timeout:        millis(int64(in.TimeoutMS)),
		Since:          c.arrived(),
		Dir:            in.Workdir,
		MaxOutputChars: int(min(int64(in.MaxOutputChars), math.MaxInt)),
	}
	var res *shell.Result
	if in.Background {
		res, err = sh.Start(ctx, r)
	} else {
		res, err = sh.Run(ctx, r)
	}
	if err != nil {
		return nil, nil, err
	}
	stopped := res.Cancelled && s.isStopping()
	if stopped {
		res.Notes = append(res.Notes, errShuttingDown.Error()+": the command was stopped")
	}
	s.logger.Info("run_command", "command", trimForLog(in.Command), "status", res.Status())
	return &mcp.CallToolResult{IsError: res.Denied || stopped}, res.ForModel(), nil
}

func (s *Server) job(ctx context.Context, req *mcp.CallToolRequest, id string) (*shell.Session, *shell.Job, error) {
	sh, err := s.session(ctx, req.Session)
	if err != nil {
		return nil, nil, err
	}
	j, ok := sh.Job(id)
	if !ok {
		return nil, nil, fmt.Errorf("no job %q in this session: list_jobs shows the jobs there are", id)
	}
	return sh, j, nil
}

func (s *Server) jobOutput(ctx context.Context, req *mcp.CallToolRequest, in JobOutputInput) (*mcp.CallToolResult, *shell.JobOutput, error) {
	_, j, err := s.job(ctx, req, in.JobID)
	if err != nil {
		return nil, nil, err
	}
	since := int64(-1)
	if in.Since != nil {
		since = *in.Since
	}
	wait := min(millis(int64(in.WaitMS)), maxWait)
	o := j.Output(ctx, since, wait, 0).ForModel()
	return nil, &o, nil
}

func (s *Server) jobKill(ctx context.Context, req *mcp.CallToolRequest, in JobInput) (*mcp.CallToolResult, *shell.JobInfo, error) {
	_, j, err := s.job(ctx, req, in.JobID)
	if err != nil {
		return nil, nil, err
	}
	info := j.Kill()
	return nil, &info, nil
}

func (s *Server) listJobs(ctx context.Context, req *mcp.CallToolRequest, _ Empty) (*mcp.CallToolResult, *JobList, error) {
	sh, err := s.session(ctx, req.Session)
	if err != nil {
		return nil, nil, err
	}
	l := &JobList{Jobs: sh.Jobs()}
	if l.Jobs == nil {
		l.Jobs = []shell.JobInfo{}
	}
	return nil, l, nil
}

func (s *Server) resetSession(ctx context.Context, req *mcp.CallToolRequest, _ Empty) (*mcp.CallToolResult, *ResetOutput, error) {
	if err := awaitTurn(ctx); err != nil {
		return nil, nil, err
	}
	sh, err := s.session(ctx, req.Session)
	if err != nil {
		return nil, nil, err
	}
	if err := sh.Reset(ctx); err != nil {
		return nil, nil, err
	}
	return nil, &ResetOutput{Cwd: sh.Cwd()}, nil
}

func (s *Server) environment(ctx context.Context, req *mcp.CallToolRequest, _ Empty) (*mcp.CallToolResult, *shell.Environment, error) {
	sh, err := s.session(ctx, req.Session)
	if err != nil {
		return nil, nil, err
	}
	e, err := sh.Environment(ctx)
	if err != nil {
		return nil, nil, err
	}
	return nil, e, nil
}
