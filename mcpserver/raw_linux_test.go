package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// rawStdio drives "corral mcp" over stdio with raw lines, as a client
// that does not follow the rules would.
type rawStdio struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	tag   string
	tmp   string // the server's TMPDIR
	done  chan struct{}
	err   error // how the server exited, once done is closed
}

// startRaw starts corral mcp with its own TMPDIR, its commands tagged, and
// checks at the end that it left no process and no file there.
func startRaw(t *testing.T, args ...string) *rawStdio {
	t.Helper()
	tag := testutil.Tag(t)
	r := &rawStdio{t: t, tag: tag, tmp: t.TempDir(), lines: make(chan string, 64), done: make(chan struct{})}
	r.cmd = exec.Command(corralBin, append([]string{"mcp", "--workdir", t.TempDir(), "--setenv", testutil.TagEnvVar(tag)}, args...)...)
	r.cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp)
	r.cmd.Stderr = os.Stderr
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.in.Close()
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			r.cmd.Process.Kill()
			t.Error("corral mcp did not exit when its stdin closed")
			<-r.done
		}
		testutil.AssertNoTagged(t, tag, 10*time.Second)
		r.assertNoFiles()
	})
	return r
}

func (r *rawStdio) assertNoFiles() {
	r.t.Helper()
	left, _ := filepath.Glob(filepath.Join(r.tmp, "*"))
	if len(left) > 0 {
		r.t.Errorf("corral mcp left files in its TMPDIR: %v", left)
	}
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// reply is a JSON-RPC message from the server.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next returns the next message the server writes.
func (r *rawStdio) next(timeout time.Duration) (reply, bool) {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			return reply{}, false
		}
		var m reply
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			r.t.Fatalf("the server wrote a line that is not JSON: %q", l)
		}
		return m, true
	case <-time.After(timeout):
		return reply{}, false
	}
}

// await returns the response with the given id, skipping notifications
// and failing on any other response.
func (r *rawStdio) await(id string) reply {
	r.t.Helper()
	for {
		m, ok := r.next(60 * time.Second)
		if !ok {
			r.t.Fatalf("no response to %s", id)
		}
		if m.Method != "" {
			continue
		}
		if string(m.ID) != id {
			r.t.Fatalf("waiting for %s, got a response to %s: %+v", id, m.ID, m)
		}
		return m
	}
}

func (r *rawStdio) initialize() {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.await(`"init"`); m.Error != nil {
		r.t.Fatalf("initialize: %+v", m.Error)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callLine is a tools/call request.
func callLine(id any, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// structured decodes a tools/call response's structuredContent.
func structured(t *testing.T, m reply, out any) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error %d: %s", m.Error.Code, m.Error.Message)
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent == nil {
		t.Fatalf("no structured content: %s", m.Result)
	}
	if err := json.Unmarshal(res.StructuredContent, out); err != nil {
		t.Fatal(err)
	}
}

// resultText returns a tools/call response's text content.
func resultText(t *testing.T, m reply) (string, bool) {
	t.Helper()
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError
}

func ping(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id) }

// commands counts the live processes of the server's commands (the
// server itself carries their tag on its command line).
func (r *rawStdio) commands() int {
	n := 0
	for _, st := range testutil.Tagged(r.tag) {
		if st.Pid != r.cmd.Process.Pid {
			n++
		}
	}
	return n
}
