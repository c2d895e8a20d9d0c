//go:build !mutation_stdineof

package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client over t (an *mcp.StdioTransport for the
// process's own stdin and stdout) until the client disconnects (its
// stdin reaches EOF) or ctx ends, then closes the client's shell session
// and returns, so that corral mcp exits with its client.
func (s *Server) ServeStdio(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	s.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
