//go:build !mutation_stdineof

package mcpserver

import (
	"context"
	"errors"
	"io"
)

// ServeStdio serves one client over in and out, MCP's stdio transport:
// one JSON-RPC message per line, each line at most MaxMessageBytes. It
// returns when the client closes in (nil), or when ctx ends: then it shuts
// the server down as Shutdown does, answering the calls in flight before
// it returns nil. A read blocked on a stream that cannot be closed, such
// as the process's own stdin, ends with the process.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.Writer) error {
	c := s.newStdioConn(in, out)
	defer s.links.close(c.link.id)
	ss, err := s.mcp.Connect(ctx, c, nil)
	if err != nil {
		c.Close()
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
		s.Close()
	case <-ctx.Done():
		s.Shutdown(context.Background())
		<-ended
		err = nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
