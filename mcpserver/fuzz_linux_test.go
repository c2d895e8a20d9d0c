package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/shell"
)

// FuzzStdio drives the stdio transport raw: whatever lines a client
// writes, every line the server writes back is a JSON-RPC message, and a
// ping sent after them is answered, so no input ends or wedges the
// connection. The policy denies every command, so no input runs anything
// but the empty command.
func FuzzStdio(f *testing.F) {
	for _, c := range malformedLines {
		f.Add(c.line)
	}
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"rm -rf /"}}}`)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}` + "\n\r\n" + `{"jsonrpc":"2.0","id":3,"result":{}}`)
	tool := &shell.Tool{Dir: f.TempDir(), SpillDir: f.TempDir(), Policy: shell.Policy{Allow: []string{`^$`}}, ProbeTools: []string{}}
	defer tool.Close()
	f.Fuzz(func(t *testing.T, input string) {
		srv, err := New(Config{Tool: tool})
		if err != nil {
			t.Fatal(err)
		}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan struct{})
		go func() {
			defer close(served)
			srv.ServeStdio(context.Background(), inR, outW)
			outW.Close()
		}()
		defer func() {
			inW.Close()
			go io.Copy(io.Discard, outR)
			<-served
		}()
		go func() {
			io.WriteString(inW, strings.ReplaceAll(input, "corral-fuzz-ping", "")+"\n")
			io.WriteString(inW, `{"jsonrpc":"2.0","id":"corral-fuzz-ping","method":"ping"}`+"\n")
		}()
		answered := make(chan error, 1)
		go func() {
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				var m struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Method  string          `json:"method"`
					Result  json.RawMessage `json:"result"`
					Error   json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" || (m.Method == "" && m.Result == nil && m.Error == nil) {
					answered <- &badLine{sc.Text()}
					return
				}
				if string(m.ID) == `"corral-fuzz-ping"` {
					answered <- nil
					return
				}
			}
			answered <- io.ErrUnexpectedEOF
		}()
		select {
		case err := <-answered:
			if err != nil {
				t.Fatalf("input %q: %v", input, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("input %q: the ping after it was not answered", input)
		}
	})
}

type badLine struct{ line string }

func (e *badLine) Error() string { return "the server wrote " + e.line }
