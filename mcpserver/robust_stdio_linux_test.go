package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// Each of these ended the server (exit 125), or made it swallow the
// messages that followed. Each must get a JSON-RPC error, and the next
// request an answer.
var malformedLines = []struct {
	name, line string
	code       int
}{
	{"InvalidJSON", `not json`, -32700},
	{"TruncatedLine", `{"jsonrpc":"2.0","id":2,"method":"pi`, -32700},
	{"OldVersion", `{"jsonrpc":"1.0","id":2,"method":"ping"}`, -32600},
	{"NoVersion", `{"id":2,"method":"ping"}`, -32600},
	{"ObjectID", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
	{"NullID", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
	{"FractionID", `{"jsonrpc":"2.0","id":2.5,"method":"ping"}`, -32600},
	{"BareNumber", `5`, -32600},
	{"Batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600},
	{"EmptyBatch", `[]`, -32600},
	{"NeitherRequestNorResponse", `{"jsonrpc":"2.0","id":2}`, -32600},
	{"MethodNotAString", `{"jsonrpc":"2.0","id":2,"method":5}`, -32600},
	{"UnknownMethod", `{"jsonrpc":"2.0","id":2,"method":"no/such"}`, -32601},
	{"ParamsNotAnObject", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}`, -32602},
	{"UnknownTool", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`, -32602},
}

func TestStdioMalformedLinesGetErrorsAndTheNextRequestIsAnswered(t *testing.T) {
	r := startRaw(t)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if m := r.await("1"); m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("a request before initialize: %+v", m.Error)
	}
	r.initialize()
	for i, c := range malformedLines {
		r.send(c.line)
		m, ok := r.next(30 * time.Second)
		if !ok {
			t.Fatalf("%s: no answer; the server is gone", c.name)
		}
		if m.Error == nil || m.Error.Code != c.code || m.Error.Message == "" {
			t.Errorf("%s: got %+v, want code %d", c.name, m, c.code)
		}
		r.send(ping(100 + i))
		if m := r.await(fmt.Sprint(100 + i)); m.Error != nil {
			t.Fatalf("%s: the next request failed: %+v", c.name, m.Error)
		}
	}
	// A line past the limit costs the server no more than the limit, and
	// gets an error.
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxMessageBytes) + `"}}`)
	if m, _ := r.next(30 * time.Second); m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "8 MiB") || string(m.ID) != "3" {
		t.Errorf("an over-long line: %+v (the error must carry its id, 3)", m)
	}
	// The TypeScript SDK writes the id last, after the params.
	r.send(`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", MaxMessageBytes) + `"},"id":"last"}`)
	if m, _ := r.next(30 * time.Second); m.Error == nil || string(m.ID) != `"last"` {
		t.Errorf("an over-long line with its id last: %+v", m)
	}
	r.send(ping(4))
	r.await("4")
}

// The server answered a call with 3.7 GB of memory for max_output_chars
// 1e12, and 118 characters for values near 2^62.
func TestStdioOutputBudgetIsCappedBeforeAllocation(t *testing.T) {
	r := startRaw(t)
	r.initialize()
	r.send(callLine(1, "run_command", map[string]any{"command": "head -c 2000000 /dev/zero | tr '\\0' a", "max_output_chars": 1 << 62}))
	var res struct {
		Stdout      string   `json:"stdout"`
		Truncated   bool     `json:"truncated"`
		Notes       []string `json:"notes"`
		StdoutBytes int64    `json:"stdout_bytes"`
	}
	structured(t, r.await("1"), &res)
	if !res.Truncated || len(res.Stdout) < 400000 || len(res.Stdout) > 600000 || !strings.Contains(strings.Join(res.Notes, " "), "max_output_chars") {
		t.Fatalf("2^62: %d characters, truncated %v, notes %q", len(res.Stdout), res.Truncated, res.Notes)
	}
	r.send(callLine(2, "run_command", map[string]any{"command": "echo $((1+1))", "timeout_ms": int64(1) << 60, "max_output_chars": 1e12}))
	structured(t, r.await("2"), &res)
	if res.Stdout != "2\n" || !strings.Contains(strings.Join(res.Notes, " "), "timeout") {
		t.Fatalf("huge timeout: %+v", res)
	}
	// A note names the value asked for, not one the server clamped it to.
	if notes := strings.Join(res.Notes, " "); !strings.Contains(notes, "max_output_chars 1000000000000 ") {
		t.Errorf("the cap note for max_output_chars 1e12: %q", notes)
	}
	// Commands and messages have the same limits on both transports.
	r.send(callLine(3, "run_command", map[string]any{"command": strings.Repeat("x", MaxCommandBytes+1)}))
	if text, isErr := resultText(t, r.await("3")); !isErr || !strings.Contains(text, "1 MiB") {
		t.Errorf("a command past the limit: %v %q", isErr, text)
	}
}

// The peer took 3.7 GB for one call asking for 1e12 characters of 200 MB
// of output.
func TestStdio200MBWithAHugeBudgetKeepsServerUnder64MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("pushes 200 MB through the server")
	}
	r := startRaw(t, "--spill-dir", t.TempDir())
	r.initialize()
	r.send(callLine(1, "run_command", map[string]any{"command": "head -c 200000000 /dev/zero | tr '\\0' a; echo; echo the end", "max_output_chars": 1e12}))
	var res struct {
		Stdout      string `json:"stdout"`
		StdoutBytes int64  `json:"stdout_bytes"`
		Truncated   bool   `json:"truncated"`
	}
	structured(t, r.await("1"), &res)
	if res.StdoutBytes < 200000000 || !res.Truncated || !strings.HasSuffix(res.Stdout, "the end\n") {
		t.Fatalf("bytes %d truncated %v", res.StdoutBytes, res.Truncated)
	}
	hwm := testutil.PeakRSS(t, r.cmd.Process.Pid)
	t.Logf("server peak RSS: %.1f MiB", float64(hwm)/(1<<20))
	if hwm > 64<<20 {
		t.Errorf("server peak RSS %d MiB, want at most 64", hwm>>20)
	}
}

// Calls queued behind a running command ran in no particular order, and
// their timeouts counted from when they started: one with timeout_ms 1000
// behind a 3 s command returned at 3 s without timing out.
func TestStdioCallsRunInArrivalOrderAndTimeoutsCountFromArrival(t *testing.T) {
	r := startRaw(t)
	r.initialize()
	log := t.TempDir() + "/order"
	var batch strings.Builder
	batch.WriteString(callLine(0, "run_command", map[string]any{"command": "sleep 1; echo 0 >> " + log}) + "\n")
	for i := 1; i <= 6; i++ {
		batch.WriteString(callLine(i, "run_command", map[string]any{"command": fmt.Sprintf("echo %d >> %s", i, log)}) + "\n")
	}
	batch.WriteString(callLine(7, "run_command", map[string]any{"command": "echo late >> " + log, "timeout_ms": 300}))
	r.send(batch.String())
	got := map[string]reply{}
	for len(got) < 8 {
		m, ok := r.next(60 * time.Second)
		if !ok {
			t.Fatalf("got %d of 8 responses", len(got))
		}
		got[string(m.ID)] = m
	}
	b, _ := os.ReadFile(log)
	if string(b) != "0\n1\n2\n3\n4\n5\n6\n" {
		t.Errorf("commands ran in the order %q", b)
	}
	var late struct {
		TimedOut bool     `json:"timed_out"`
		WaitedMS int64    `json:"waited_ms"`
		Notes    []string `json:"notes"`
	}
	structured(t, got["7"], &late)
	if !late.TimedOut || late.WaitedMS < 300 || !strings.Contains(strings.Join(late.Notes, " "), "did not run") {
		t.Errorf("a call whose timeout expired in the queue: %+v", late)
	}
	var first struct {
		WaitedMS int64    `json:"waited_ms"`
		Notes    []string `json:"notes"`
	}
	structured(t, got["6"], &first)
	if first.WaitedMS < 500 || !strings.Contains(strings.Join(first.Notes, " "), "waited") {
		t.Errorf("a call that waited: %+v", first)
	}
}

// Many calls queued behind a running command: the SDK starts their
// handlers in no particular order, and they still run in the order they
// arrived.
func TestStdioManyQueuedCallsRunInArrivalOrder(t *testing.T) {
	r := startRaw(t)
	r.initialize()
	log := t.TempDir() + "/order"
	var batch, want strings.Builder
	batch.WriteString(callLine(0, "run_command", map[string]any{"command": "sleep 1"}) + "\n")
	for i := 1; i <= 30; i++ {
		batch.WriteString(callLine(i, "run_command", map[string]any{"command": fmt.Sprintf("echo %d >> %s", i, log)}) + "\n")
		fmt.Fprintf(&want, "%d\n", i)
	}
	r.send(strings.TrimSuffix(batch.String(), "\n"))
	for n := 0; n < 31; n++ {
		if _, ok := r.next(60 * time.Second); !ok {
			t.Fatalf("got %d of 31 responses", n)
		}
	}
	if b, _ := os.ReadFile(log); string(b) != want.String() {
		t.Errorf("commands ran in the order %q", b)
	}
}

// The server sent a result for a call the client had cancelled.
func TestStdioCancelledCallGetsNoResponseAndItsCommandStops(t *testing.T) {
	r := startRaw(t)
	r.initialize()
	r.send(callLine("slow", "run_command", map[string]any{"command": "sleep 300"}))
	testutil.WaitFor(t, 10*time.Second, "the command running", func() bool { return r.commands() > 0 })
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"changed my mind"}}`)
	testutil.WaitFor(t, 10*time.Second, "the cancelled command gone", func() bool { return r.commands() == 0 })
	r.send(ping(9))
	if m := r.await("9"); m.Error != nil { // await fails on a response to "slow"
		t.Fatal(m.Error)
	}
}

// SIGTERM waited for the running command to finish and never answered
// the call in flight.
func TestStdioSIGTERMAnswersTheCallInFlightAndLeavesNothing(t *testing.T) {
	r := startRaw(t)
	r.initialize()
	r.send(callLine(1, "run_command", map[string]any{"command": "sleep 300", "background": true}))
	r.await("1")
	mark := t.TempDir() + "/state-dir"
	r.send(callLine(2, "run_command", map[string]any{"command": "echo $__corral_d > " + mark + "; echo started; sleep 300"}))
	var state []byte
	testutil.WaitFor(t, 10*time.Second, "the command running", func() bool {
		state, _ = os.ReadFile(mark)
		return len(state) > 0
	})
	start := time.Now()
	r.cmd.Process.Signal(syscall.SIGTERM)
	m := r.await("2")
	text, isErr := resultText(t, m)
	var res struct {
		Stdout string `json:"stdout"`
	}
	structured(t, m, &res)
	if !isErr || !strings.Contains(text, "shutting down") || !strings.Contains(res.Stdout, "started") {
		t.Errorf("the call in flight got %v %q", isErr, text)
	}
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("exit: %v", r.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("corral mcp did not exit after SIGTERM")
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	testutil.AssertNoTagged(t, r.tag, 5*time.Second)
	r.assertNoFiles()
	if dir := strings.TrimSpace(string(state)); dir == "" {
		t.Error("no session state directory reported")
	} else if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the session's state directory %s is still there: %v", dir, err)
	}
}

// The TypeScript SDK drops the connection on a line above 10 MiB; no
// result may come near it.
func TestStdioResultsStayUnderTheClientsLineLimit(t *testing.T) {
	r := startRaw(t, "--output-chars-cap", "2000000", "--max-output-chars", "2000000")
	r.initialize()
	// Control characters are escaped six bytes each, twice (text and
	// structured content).
	r.send(callLine(1, "run_command", map[string]any{"command": "head -c 3000000 /dev/zero"}))
	m, ok := r.next(60 * time.Second)
	if !ok {
		t.Fatal("no response")
	}
	raw, _ := json.Marshal(m)
	if len(raw) >= MaxMessageBytes {
		t.Fatalf("a message of %d bytes", len(raw))
	}
	if m.Error == nil || !strings.Contains(m.Error.Message, "max_output_chars") {
		t.Logf("response of %d bytes", len(raw))
	}
	r.send(ping(2))
	r.await("2")
}

// corral mcp --sandbox confines every command of the connection, or, when
// the sandbox cannot be built here, refuses to start (exit 125, with the
// reason) rather than serve commands unconfined.
func TestStdioSandboxConfinesCommandsOrRefusesToStart(t *testing.T) {
	work, outside := t.TempDir(), testutil.OutsideTmp(t)
	probe := exec.Command(corralBin, "mcp", "--sandbox", "workspace", "--workdir", work)
	probe.Stdin = strings.NewReader("")
	out, err := probe.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() != 125 || !strings.Contains(string(out), "sandbox") {
			t.Fatalf("exit %d: %s", ee.ExitCode(), out)
		}
		t.Skipf("SKIP: the sandbox cannot be built here, and corral mcp refused to start as it must: %s", strings.TrimSpace(string(out)))
	}
	r := startRaw(t, "--sandbox", "workspace", "--workdir", work)
	r.initialize()
	r.send(callLine(1, "run_command", map[string]any{"command": "echo ok > ./inside; echo x > " + outside + "/x; echo rc=$?"}))
	var res struct {
		Stdout string `json:"stdout"`
	}
	structured(t, r.await("1"), &res)
	if _, err := os.Stat(outside + "/x"); !os.IsNotExist(err) || !strings.Contains(res.Stdout, "rc=1") {
		t.Errorf("a write outside the workspace: %v %+v", err, res)
	}
	if _, err := os.Stat(work + "/inside"); err != nil {
		t.Errorf("a write inside the workspace: %v", err)
	}
	r.send(callLine(2, "environment", map[string]any{}))
	var env struct {
		Sandbox *struct {
			Mode string `json:"mode"`
		} `json:"sandbox"`
	}
	structured(t, r.await("2"), &env)
	if env.Sandbox == nil || env.Sandbox.Mode != "workspace" {
		t.Errorf("environment does not report the sandbox: %+v", env.Sandbox)
	}
}
