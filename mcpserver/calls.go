package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callCtx is a tool call in flight, which Shutdown cancels.
type callCtx struct {
	cancel context.CancelCauseFunc
}

// callMiddleware runs around every tool call: it refuses calls once
// Shutdown began, registers the call so that Shutdown can cancel it, and
// claims the call's place in its link's line (see order.go), freeing it
// at once for a tool that does not run in the session's shell.
func (s *Server) callMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		c := s.links.claim(req.GetExtra())
		defer c.end()
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); !ok || (p.Name != "run_command" && p.Name != "reset_session") {
			c.setFree()
		}
		ctx, done, ok := s.begin(ctx)
		if !ok {
			return errorResult(errShuttingDown.Error() + ": the call was not run; call again when the server is back"), nil
		}
		defer done()
		return next(context.WithValue(ctx, callOfKey{}, c), method, req)
	}
}

// awaitTurn holds a call that runs in the session's shell until the calls
// that arrived before it are done (see order.go).
func awaitTurn(ctx context.Context) error {
	if err := callOf(ctx).turn(ctx); err != nil {
		return errors.New("cancelled while waiting for the session's previous command (" + context.Cause(ctx).Error() + "): the command did not run")
	}
	return nil
}

// begin registers a call in flight; ok is false once Shutdown began.
func (s *Server) begin(ctx context.Context) (context.Context, func(), bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancelCause(ctx)
	c := &callCtx{cancel: cancel}
	s.calls[c] = struct{}{}
	s.handlers.Add(1)
	return ctx, func() {
		s.mu.Lock()
		delete(s.calls, c)
		s.mu.Unlock()
		cancel(nil)
		s.handlers.Done()
	}, true
}

// stopping reports whether Shutdown began.
func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// errorResult is a tool call refused before it ran.
func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}
