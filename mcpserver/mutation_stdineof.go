//go:build mutation_stdineof

package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio, mutated for the CI's mutation step (.ci/mutations): it stays
// after its client has gone (stdin at EOF) until ctx ends. The stdio
// tests must catch it. Built only with the tag mutation_stdineof.
func (s *Server) ServeStdio(ctx context.Context, t mcp.Transport) error {
	s.mcp.Run(ctx, t)
	<-ctx.Done()
	s.Close()
	return nil
}
