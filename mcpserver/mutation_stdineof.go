//go:build mutation_stdineof

// Mutant: corral mcp stays after its client closed stdin.
// Guarantee: 2. nothing left behind (MCP)
// Caught: ./mcpserver TestStdioBackgroundJobsAreReadKilledAndEndWithTheConnection

package mcpserver

import (
	"context"
	"io"
)

// ServeStdio, mutated for the CI's mutation step (.ci/mutations): it stays
// after its client has gone (stdin at EOF) until ctx ends. The stdio
// tests must catch it. Built only with the tag mutation_stdineof.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.Writer) error {
	c := s.newStdioConn(in, out)
	defer s.links.close(c.link.id)
	if ss, err := s.mcp.Connect(ctx, c, nil); err == nil {
		defer ss.Close()
	}
	<-ctx.Done()
	s.Close()
	return nil
}
