package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callCtx is a tool call in flight, which Shutdown cancels.
type callCtx struct {
	cancel context.CancelCauseFunc
}

// arrivalKey holds, in a call's context, when the call arrived at the
// transport.
type arrivalKey struct{}

// arrivedAt returns when the call of ctx arrived at the transport; the zero
// time when no transport said.
func arrivedAt(ctx context.Context) time.Time {
	t, _ := ctx.Value(arrivalKey{}).(time.Time)
	return t
}

// callMiddleware runs around every tool call: it refuses calls once
// Shutdown began, registers the call so that Shutdown can cancel it, and
// holds a call that runs in the session's shell until the ones that
// arrived before it are done, so they run in arrival order.
func (s *Server) callMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		st, stamped := s.stampOf(req)
		if stamped {
			defer st.link.ended(st.seq)
		}
		ctx, done, ok := s.begin(ctx)
		if !ok {
			return errorResult(errShuttingDown.Error() + ": the call was not run; call again when the server is back"), nil
		}
		defer done()
		if stamped {
			if st.serial {
				if err := st.link.turn(ctx, st.seq); err != nil {
					return errorResult("cancelled while waiting for the session's previous command (" + context.Cause(ctx).Error() + "): the command did not run"), nil
				}
			}
			ctx = context.WithValue(ctx, arrivalKey{}, st.at)
		}
		return next(ctx, method, req)
	}
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
