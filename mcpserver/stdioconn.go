package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/mcpserver/internal/wire"
)

// MaxMessageBytes is the largest JSON-RPC message the server reads, on
// both transports: a line on stdio, a request body over HTTP. A larger one
// gets a JSON-RPC error (HTTP 413 over HTTP) and the connection goes on.
// Commands are capped lower, at MaxCommandBytes, so that any command fits
// however its characters are escaped. The largest result the server
// writes stays below it too.
const MaxMessageBytes = 8 << 20

// stdioConn is one stdio connection, as the SDK sees it: see ServeStdio.
type stdioConn struct {
	in   io.ReadCloser
	out  io.Writer
	link *link

	lines  chan lineOrErr
	closed chan struct{}
	once   sync.Once

	writeMu sync.Mutex
}

type lineOrErr struct {
	b   []byte
	err error
}

func (s *Server) newStdioConn(in io.ReadCloser, out io.Writer) *stdioConn {
	c := &stdioConn{in: in, out: out, link: s.links.open(""), lines: make(chan lineOrErr), closed: make(chan struct{})}
	go c.readLoop()
	return c
}

// Connect hands the connection to the SDK, as an mcp.Transport.
func (c *stdioConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// readLoop reads lines until the stream ends, so that Read can give up on
// Close while a read is blocked.
func (c *stdioConn) readLoop() {
	ls := wire.NewLines(c.in, MaxMessageBytes)
	for {
		b, err := ls.Next()
		if b != nil {
			b = append([]byte(nil), b...)
		}
		select {
		case c.lines <- lineOrErr{b, err}:
		case <-c.closed:
			return
		}
		if err != nil && !errors.Is(err, wire.ErrTooLong) {
			return
		}
	}
}

// Read returns the next well-formed message, answering malformed ones
// itself. The message is parsed once, by wire.Check; the SDK's message is
// built from what it read.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var l lineOrErr
		select {
		case l = <-c.lines:
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var tooLong *wire.TooLongError
		if errors.As(l.err, &tooLong) {
			if mutant.OversizedIDDropped {
				tooLong.ID = nil
			}
			c.reject(&wire.Error{ID: tooLong.ID, Code: wire.CodeInvalidRequest, Message: "invalid request: the message is longer than the 8 MiB limit; commands are limited to 1 MiB: write a long script to a file and run the file"})
			continue
		}
		if l.err != nil {
			return nil, l.err
		}
		m, werr := wire.Check(l.b)
		if werr != nil {
			c.reject(werr)
			continue
		}
		msg, err := sdkMessage(m)
		if err != nil {
			if m.Kind != wire.Notification {
				c.reject(&wire.Error{ID: m.ID, Code: wire.CodeInvalidRequest, Message: "invalid request: " + err.Error()})
			}
			continue
		}
		c.note(m, msg)
		return msg, nil
	}
}

// sdkMessage builds the SDK's message from what wire.Check read of it.
func sdkMessage(m wire.Message) (jsonrpc.Message, error) {
	var id jsonrpc.ID
	if m.ID != nil {
		var v any
		if err := json.Unmarshal(m.ID, &v); err != nil {
			return nil, err
		}
		var err error
		if id, err = jsonrpc.MakeID(v); err != nil {
			return nil, err
		}
	}
	if m.Kind != wire.Response {
		return &jsonrpc.Request{ID: id, Method: m.Method, Params: m.Params}, nil
	}
	resp := &jsonrpc.Response{ID: id, Result: m.Result}
	if m.Error != nil {
		var e jsonrpc.Error
		if err := json.Unmarshal(m.Error, &e); err != nil {
			return nil, err
		}
		resp.Error = &e
	}
	return resp, nil
}

// note enters a call in the link's line, known by the RequestExtra the SDK
// will hand its handler, or records a cancellation.
func (c *stdioConn) note(m wire.Message, msg jsonrpc.Message) {
	switch {
	case m.Kind == wire.Request && m.Method == "tools/call":
		extra := &mcp.RequestExtra{}
		msg.(*jsonrpc.Request).Extra = extra
		c.link.arrive(m.ID, callKey(extra))
	case m.Kind == wire.Notification && m.Method == "notifications/cancelled":
		if id, ok := wire.CancelledID(m.Params); ok {
			c.link.cancel(id)
		}
	}
}

// reject writes a JSON-RPC error for a message the SDK never saw.
func (c *stdioConn) reject(e *wire.Error) {
	c.writeLine(e.Encode())
}

// Write writes one message as a line. The response to a call the client
// cancelled is dropped; one too large to send becomes an error.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp && resp.ID.IsValid() && c.link.answered(wire.ValueKey(resp.ID.Raw())) {
		return nil
	}
	if isResp && resp.Error != nil {
		msg = &jsonrpc.Response{ID: resp.ID, Error: withCode(resp.Error)}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if len(data) >= MaxMessageBytes && isResp {
		data, err = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{
			Code:    wire.CodeInternalError,
			Message: "the result is larger than the 8 MiB a message may be; ask for less output (max_output_chars)",
		}})
		if err != nil {
			return err
		}
	}
	return c.writeLine(data)
}

// withCode gives an error the SDK sends without a JSON-RPC code (code 0,
// which no client expects) the code it deserves: -32600 for a request
// before initialize, -32603 for anything else.
func withCode(err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return err
	}
	code := int64(wire.CodeInternalError)
	if strings.Contains(err.Error(), "during session initialization") {
		code = wire.CodeInvalidRequest
		return &jsonrpc.Error{Code: code, Message: err.Error() + ": send initialize (and notifications/initialized) first"}
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

func (c *stdioConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	data = append(data, '\n')
	_, err := c.out.Write(data)
	return err
}

// Close closes the input stream, which ends the read loop.
func (c *stdioConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}

// SessionID implements mcp.Connection; stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }
