// Package mcpserver serves the shell tool over the Model Context Protocol,
// with the official Go SDK: over stdio (one client) and over streamable
// HTTP (many clients). Each client connection gets its own persistent shell
// session, created at its first tool call and closed, with its background
// jobs, when the connection ends. It can serve the task service's tools
// too, or instead (Config.Service): a client hands tasks to the service's
// agents and waits for their results (see Service).
//
// The transports stand between the SDK and clients the server does not
// control: every message is checked before the SDK sees it, so a malformed
// one gets a JSON-RPC error and the connection goes on; messages, commands
// and results have size limits; the calls that run in a session's shell
// run one at a time in the order they arrived, their timeouts counted from
// then; a call the client cancelled gets no response. Shutdown ends the
// server in order, leaving no command, job or file behind.
//
// Tools: run_command, job_output, job_kill, list_jobs, reset_session and
// environment; with a Service, list_agents, submit_task, wait_execution,
// get_execution, execution_logs, cancel_execution and list_executions.
// Their descriptions are written for a model: what the tool does, its
// limits, what a timeout means, and that background jobs are read with
// job_output.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/httpguard"
	"github.com/corralrun/corral/shell"
)

// Server is an MCP server exposing a shell.Tool, the task service's
// tools, or both. Create it with New; its methods are safe for concurrent
// use.
type Server struct {
	tool   *shell.Tool
	svc    *Service
	mcp    *mcp.Server
	logger *slog.Logger
	links  links

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*shell.Session
	calls    map[*callCtx]struct{} // tool calls in flight
	stopping bool                  // Shutdown began: no new calls
	closed   bool                  // sessions closed: no new sessions
	reapers  []chan struct{}       // closed to stop the HTTP reapers
	handlers sync.WaitGroup        // tool calls in flight
	watchers sync.WaitGroup        // the server's own goroutines
}

// Config configures a Server.
type Config struct {
	// Tool runs the commands; its Shell must be bash (sessions need it).
	// Nil serves no shell tool; then Service is required.
	Tool *shell.Tool
	// Service, when set, serves the task service's tools (see Service)
	// beside the shell tool's, or alone when Tool is nil.
	Service *Service
	// Name and Version identify the server to clients; empty means
	// "corral" and "dev".
	Name, Version string
	// Logger receives the SDK's and the server's logs; nil means none.
	Logger *slog.Logger
}

// maxWait caps job_output's wait_ms.
const maxWait = 60 * time.Second

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Tool == nil && cfg.Service == nil {
		return nil, errors.New("mcpserver: Config.Tool and Config.Service are nil: give the shell.Tool that runs the commands, or the Service whose tools to serve")
	}
	if cfg.Service != nil && cfg.Service.Client == nil {
		return nil, errors.New("mcpserver: Config.Service.Client is nil: give the client of the task service")
	}
	if cfg.Name == "" {
		cfg.Name = "corral"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{tool: cfg.Tool, svc: cfg.Service, logger: logger, sessions: map[*mcp.ServerSession]*shell.Session{}, calls: map[*callCtx]struct{}{}}
	var say []string
	if cfg.Tool != nil {
		say = append(say, instructions)
	}
	if cfg.Service != nil {
		say = append(say, serviceInstructions)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &mcp.ServerOptions{
		Logger:       logger,
		Instructions: strings.Join(say, "\n\n"),
	})
	s.mcp.AddReceivingMiddleware(s.callMiddleware)
	s.mcp.AddReceivingMiddleware(traceCalls) // outermost: the span covers the wait for the session's turn
	if cfg.Tool != nil {
		shell.ReapStale() // a server killed before this one left its sessions' state
		s.addTools()
	}
	if cfg.Service != nil {
		s.addServiceTools()
	}
	return s, nil
}

const instructions = `corral runs shell commands on this machine in a persistent bash session (one per connection), with timeouts that hold and nothing left running behind. Use run_command for commands; background: true for servers, watchers and long builds, then job_output to read them and job_kill to stop them. Call environment once to learn the OS, shell, working directory and tool versions.`

// CheckListen refuses to serve on an address other than loopback without a
// token: anyone who can reach the port could run commands.
func CheckListen(addr, token string) error {
	loopback, err := httpguard.ListensOnLoopback(addr)
	if err != nil {
		return fmt.Errorf("mcpserver: %w", err)
	}
	if token != "" || loopback {
		return nil
	}
	return fmt.Errorf("mcpserver: refusing to serve on %s without a bearer token: anyone who reaches it could run commands; set a token (corral mcp --token-file or CORRAL_MCP_TOKEN) or listen on 127.0.0.1", addr)
}

// Shutdown ends the server in order. Tool calls that arrive from now on
// are refused with an error result; the calls in flight are cancelled (a
// running command is stopped as a timeout would stop it) and answered with
// an error result; once they are answered, or ctx ends, every client
// session is closed: its background jobs are stopped, their process trees
// gone, and its state files removed. The transports stop with it: the
// stdio connection ends, HTTP clients get 503 for new requests and their
// event streams end. The Tool itself is not closed: its own jobs and
// temporary directory are the caller's, through Tool.Close. Shutdown
// returns once all of that is done; the processes are gone even when ctx
// ended first.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	for c := range s.calls {
		c.cancel(errShuttingDown)
	}
	s.mu.Unlock()
	handled := make(chan struct{})
	go func() { s.handlers.Wait(); close(handled) }()
	select {
	case <-handled:
		for _, l := range s.links.all() {
			l.idle(ctx)
		}
	case <-ctx.Done():
	}
	return s.Close()
}

// errShuttingDown is the cause of the calls Shutdown cancels.
var errShuttingDown = errors.New("corral mcp is shutting down")

// Close closes every client's shell session at once, stopping the
// commands and background jobs running there and waiting for their
// process trees to be gone, and ends every client connection. Use
// Shutdown to answer the calls in flight first.
func (s *Server) Close() error {
	s.mu.Lock()
	s.stopping, s.closed = true, true
	for c := range s.calls {
		c.cancel(errShuttingDown)
	}
	sessions := s.sessions
	s.sessions = map[*mcp.ServerSession]*shell.Session{}
	for _, stop := range s.reapers {
		close(stop)
	}
	s.reapers = nil
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sh := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); sh.Close() }()
	}
	wg.Wait()
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	s.watchers.Wait()
	return nil
}

// session returns the shell session of the client behind req, opening it
// at the first call.
func (s *Server) session(ctx context.Context, ss *mcp.ServerSession) (*shell.Session, error) {
	if s.tool == nil {
		return nil, errors.New("this server runs no shell commands")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, shell.ErrClosed
	}
	if sh, ok := s.sessions[ss]; ok {
		s.mu.Unlock()
		return sh, nil
	}
	s.mu.Unlock()
	sh, err := s.tool.NewSession(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sh.Close()
		return nil, shell.ErrClosed
	}
	if other, ok := s.sessions[ss]; ok { // a concurrent first call won
		s.mu.Unlock()
		sh.Close()
		return other, nil
	}
	s.sessions[ss] = sh
	s.watchers.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.watchers.Done()
		ss.Wait()
		s.mu.Lock()
		cur, ok := s.sessions[ss]
		if ok && cur == sh {
			delete(s.sessions, ss)
		}
		s.mu.Unlock()
		sh.Close()
	}()
	return sh, nil
}

func trimForLog(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return strings.ReplaceAll(s, "\n", "\\n")
}
