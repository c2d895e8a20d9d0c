// Package mcpserver serves the shell tool over the Model Context Protocol,
// with the official Go SDK: over stdio (one client) and over streamable
// HTTP (many clients). Each client connection gets its own persistent shell
// session, created at its first tool call and closed, with its background
// jobs, when the connection ends.
//
// Tools: run_command, job_output, job_kill, list_jobs, reset_session and
// environment. Their descriptions are written for a model: what the tool
// does, its limits, what a timeout means, and that background jobs are read
// with job_output.
package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/shell"
)

// Server is an MCP server exposing a shell.Tool. Create it with New; its
// methods are safe for concurrent use.
type Server struct {
	tool   *shell.Tool
	mcp    *mcp.Server
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*shell.Session
	closed   bool
	wg       sync.WaitGroup
}

// Config configures a Server.
type Config struct {
	// Tool runs the commands; its Shell must be bash (sessions need it).
	// Required.
	Tool *shell.Tool
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
	if cfg.Tool == nil {
		return nil, errors.New("mcpserver: Config.Tool is nil: give the shell.Tool that runs the commands")
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
	s := &Server{tool: cfg.Tool, logger: logger, sessions: map[*mcp.ServerSession]*shell.Session{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &mcp.ServerOptions{
		Logger:       logger,
		Instructions: instructions,
	})
	s.addTools()
	return s, nil
}

const instructions = `corral runs shell commands on this machine in a persistent bash session (one per connection), with timeouts that hold and nothing left running behind. Use run_command for commands; background: true for servers, watchers and long builds, then job_output to read them and job_kill to stop them. Call environment once to learn the OS, shell, working directory and tool versions.`

// Handler returns an http.Handler serving streamable HTTP. With a
// non-empty token every request must carry "Authorization: Bearer TOKEN".
// Idle HTTP sessions end after idle (zero: 30 minutes), closing their
// shell sessions.
func (s *Server) Handler(token string, idle time.Duration) http.Handler {
	if idle <= 0 {
		idle = 30 * time.Minute
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout: idle,
		Logger:         s.logger,
	})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="corral"`)
			http.Error(w, "unauthorized: send the server's token as Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// CheckListen refuses to serve on an address other than loopback without a
// token: anyone who can reach the port could run commands.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcpserver: listen address %q: %w (want HOST:PORT, such as 127.0.0.1:8765)", addr, err)
	}
	if token != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("mcpserver: refusing to serve on %s without a bearer token: anyone who reaches it could run commands; set a token (corral mcp --token or CORRAL_MCP_TOKEN) or listen on 127.0.0.1", addr)
}

// Close closes every client's shell session, ending their background jobs.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	sessions := s.sessions
	s.sessions = map[*mcp.ServerSession]*shell.Session{}
	s.mu.Unlock()
	for _, sh := range sessions {
		sh.Close()
	}
	s.wg.Wait()
	return nil
}

// session returns the shell session of the client behind req, opening it
// at the first call.
func (s *Server) session(ctx context.Context, ss *mcp.ServerSession) (*shell.Session, error) {
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
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
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
