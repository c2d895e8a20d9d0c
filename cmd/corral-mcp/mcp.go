package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/mcpserver"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/shell"
)

func init() {
	register("mcp", mcpMain)
}

const mcpUsage = `Usage: corral mcp [flags]

Serves corral's shell tool to MCP clients (Claude Code, agent frameworks,
IDEs). Without --http it speaks MCP over stdin and stdout, for a client that
starts it:

  claude mcp add corral -- corral mcp

With --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp;
on an address other than loopback a bearer token is required, and clients
send "Authorization: Bearer TOKEN". Give the token in a file only you can
read, or through a descriptor, which leaves nothing on disk:

  corral mcp --http 0.0.0.0:8765 --token-file ~/.config/corral/mcp-token
  corral mcp --http 0.0.0.0:8765 --token-file <(pass show corral/mcp)

or in CORRAL_MCP_TOKEN, which corral reads once and removes from its own
environment before any command runs: no command sees the token, in its
environment or in corral's (/proc/PID/environ). --token is deprecated: the
command line shows it to every local user. Browsers may call the server
from loopback origins and those named with --allow-origin.

Each client connection gets its own persistent bash session. Tools:
run_command (command, timeout_ms, workdir, background, max_output_chars),
job_output (job_id, since, wait_ms), job_kill (job_id), list_jobs,
reset_session and environment. A session's commands run one at a time in
the order they arrive, their timeouts counted from then.

A session and its background jobs end with their connection: over stdio
when the client closes corral's stdin (or exits); over HTTP when the client
sends DELETE, when a client that held an event stream has had no connection
open for --client-idle (the TypeScript SDK and the Inspector close their
stream and never send DELETE), or after --idle without requests. On SIGTERM
or SIGINT corral stops taking calls, stops the commands in flight and
answers them with an error result, ends every session with its jobs,
removes its temporary files, and exits 0. Sessions' state and job logs are
private to their user; what a killed server (SIGKILL) left is removed at
the next start.

Malformed messages get a JSON-RPC error and the connection goes on. Limits:
8 MiB per message, 1 MiB per command, --output-chars-cap characters of
output per result.

With --service URL it serves the task service's tools instead, so that an
agent can delegate to corral's agents (it runs no command itself):

  claude mcp add corral -- corral mcp --service 127.0.0.1:7070

list_agents, submit_task (agent, input, timeout_ms: returns the execution
id at once), wait_execution (id, timeout_ms, max_output_chars: the result,
following the run through its retry attempts, with progress notifications;
a wait the client cancels ends), get_execution, execution_logs (id, tail,
after), cancel_execution and list_executions (agent, status, limit,
cursor). The service's API token is read from --service-token-file, else
CORRAL_TOKEN (taken out of corral's environment), else the token file of
--data, as the client commands find it; never from the command line.
--http, --token-file and the other transport flags work as above; the
shell tool's flags are refused.

Flags:
`

// mcpFlags are corral mcp's flags.
type mcpFlags struct {
	fs               *flag.FlagSet
	build            func() (*shell.Tool, error)
	tf               *cliflag.Telemetry
	svc              *mcpServiceFlags
	addr             *string
	takeToken        func() (string, error)
	idle, clientIdle *time.Duration
	origins          cliflag.StringList
	legacyDir        string
	verbose          *bool
}

func newMCPFlags() *mcpFlags {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), mcpUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), cliflag.SandboxHelp+cliflag.TelemetryHelp)
	}
	f := &mcpFlags{fs: fs, build: toolFlags(fs, "workdir"), tf: cliflag.AddTelemetry(fs), svc: addMCPServiceFlags(fs)}
	f.addr = fs.String("http", "", "serve streamable HTTP on `HOST:PORT` instead of stdio")
	f.takeToken = mcpTokenFlags(fs)
	f.idle = fs.Duration("idle", 30*time.Minute, "with --http, close a client's session after this long without requests")
	f.clientIdle = fs.Duration("client-idle", time.Minute, "with --http, close the session of a client that held an event stream and has had no connection open for this long (0: never)")
	fs.Var(&f.origins, "allow-origin", "with --http, let browsers call from `ORIGIN` (scheme://host[:port]) besides loopback ones (repeatable)")
	fs.StringVar(&f.legacyDir, "dir", "", "older name of --workdir")
	f.verbose = fs.Bool("v", false, "log to stderr")
	return f
}

// check refuses what the parsed flags cannot mean, and applies --dir.
func (f *mcpFlags) check() error {
	if f.fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	}
	if f.legacyDir != "" {
		if err := f.fs.Set("workdir", f.legacyDir); err != nil {
			return err
		}
	}
	for _, o := range f.origins {
		if _, err := mcpserver.ParseOrigin(o); err != nil {
			return fmt.Errorf("--allow-origin: %w", err)
		}
	}
	return nil
}

func mcpMain(args []string) int {
	f := newMCPFlags()
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return cliflag.ExitCorralFailed
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "corral mcp:", err)
		return cliflag.ExitCorralFailed
	}
	if err := f.check(); err != nil {
		return fail(err)
	}
	token, err := f.takeToken()
	if err != nil {
		return fail(err)
	}
	var logger *slog.Logger
	if *f.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := mcpserver.Config{Version: cliflag.Version(), Logger: logger}
	bound := 5 * time.Second // a service wait ends at once when its call does
	base := f.tf.Start("mcp", cliflag.Version())
	if f.svc.url != "" {
		if cfg.Service, err = f.svc.service(f.fs); err != nil {
			return fail(err)
		}
	} else {
		tool, err := f.build()
		if err != nil {
			return fail(err)
		}
		defer tool.Close()
		if err := checkSandbox(tool); err != nil {
			return fail(err)
		}
		tool.Env = append(tool.Env, f.tf.Env()...)
		cfg.Tool, bound = tool, shutdownBound(tool)
	}
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return fail(err)
	}
	defer srv.Close()
	ctx, stop := signal.NotifyContext(base, cliflag.StopSignals...)
	defer stop()
	if *f.addr == "" {
		if err := srv.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
			return fail(err)
		}
		return 0
	}
	if err := f.serveHTTP(ctx, base, srv, token, bound); err != nil {
		return fail(err)
	}
	return 0
}

// serveHTTP serves srv over streamable HTTP at --http until ctx ends, then
// shuts it down within bound: connections stop being accepted while the
// calls in flight are answered on the ones open; the server's Shutdown
// then ends every session, which ends the event streams that keep
// connections busy.
func (f *mcpFlags) serveHTTP(ctx, base context.Context, srv *mcpserver.Server, token string, bound time.Duration) error {
	if err := mcpserver.CheckListen(*f.addr, token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *f.addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	opts := mcpserver.HTTPOptions{Token: token, Idle: *f.idle, ClientIdle: cliflag.NegIfZero(*f.clientIdle), AllowOrigins: f.origins}
	h := srv.Handler(opts)
	if f.tf.On() {
		h = withTelemetry(h, base)
	}
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "corral mcp: serving streamable HTTP at http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	closed := make(chan struct{})
	go func() { hs.Shutdown(sctx); close(closed) }()
	srv.Shutdown(sctx)
	select {
	case <-closed:
	case <-sctx.Done():
		hs.Close()
	}
	return nil
}

// shutdownBound is how long an orderly shutdown may take: the commands in
// flight get the grace period to exit and the drain for their output.
func shutdownBound(t *shell.Tool) time.Duration {
	grace := t.Grace
	if grace <= 0 {
		grace = proc.DefaultGrace
	}
	return grace + proc.DefaultDrain + 2*time.Second
}

// checkSandbox builds the sandbox asked for once, so that a machine that
// cannot build it is refused at start (exit 125, with the reason), not at
// the first command.
func checkSandbox(t *shell.Tool) error {
	if !t.Sandbox.Enabled() {
		return nil
	}
	dir := t.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	enc, err := proc.NewEnclosure(context.Background(), proc.EnclosureSpec{Sandbox: t.Sandbox, Workdir: dir})
	if err != nil {
		return fmt.Errorf("--sandbox %s: %w", t.Sandbox.Mode, err)
	}
	return enc.Close()
}
