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
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/mcpserver"
)

func init() {
	register("mcp", "serve the agent shell tool over MCP (stdio or streamable HTTP)", mcpMain)
}

const mcpUsage = `Usage: corral mcp [flags]

Serves corral's shell tool to MCP clients (Claude Code, agent frameworks,
IDEs). Without --http it speaks MCP over stdin and stdout, for a client that
starts it:

  claude mcp add corral -- corral mcp

With --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp;
on an address other than loopback a bearer token is required (--token or
CORRAL_MCP_TOKEN), and clients send "Authorization: Bearer TOKEN".

Each client connection gets its own persistent bash session. Tools:
run_command (command, timeout_ms, workdir, background, max_output_chars),
job_output (job_id, since, wait_ms), job_kill (job_id), list_jobs,
reset_session and environment. Background jobs and sessions end when their
connection does, and all of them when corral exits.

Flags:
`

func mcpMain(args []string) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), mcpUsage); fs.PrintDefaults() }
	build := toolFlags(fs)
	addr := fs.String("http", "", "serve streamable HTTP on `HOST:PORT` instead of stdio")
	token := fs.String("token", os.Getenv("CORRAL_MCP_TOKEN"), "bearer `TOKEN` HTTP clients must send (default $CORRAL_MCP_TOKEN)")
	idle := fs.Duration("idle", 30*time.Minute, "with --http, close a client's session after this long without requests")
	verbose := fs.Bool("v", false, "log to stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitCorralFailed
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "corral mcp:", err)
		return exitCorralFailed
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	tool, err := build()
	if err != nil {
		return fail(err)
	}
	defer tool.Close()
	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := mcpserver.New(mcpserver.Config{Tool: tool, Version: version(), Logger: logger})
	if err != nil {
		return fail(err)
	}
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := srv.ServeStdio(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			return fail(err)
		}
		return 0
	}
	if err := mcpserver.CheckListen(*addr, *token); err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler(*token, *idle))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "corral mcp: serving streamable HTTP at http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	return 0
}
