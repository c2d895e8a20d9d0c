//go:build linux

// Command shell measures the agent shell tool against references measured
// in the same run, and prints beside them, labelled as cited, the figures
// reported for the best-known peer (an agent framework's local shell
// tool), which cannot be run here:
//
//   - per-command time of `true` in a persistent session, and one-shot;
//     references: bash -c true started with os/exec (the floor of a fresh
//     shell) and a long-lived bash reading commands with a random sentinel
//     (the other way to build sessions);
//   - how far past its deadline a timed-out session command returns, and
//     that the next command sees the same cwd and exports;
//   - how long a stop takes that lands as a command starts: job_kill right
//     after a background start, and run_command with a 1-20 ms timeout
//     (before the fix one in eight sat out the 2 s grace);
//   - the round trip of an MCP ping through corral's stdio framing (each
//     message checked before the SDK sees it) against the SDK's own stdio
//     transport, both in process over pipes;
//   - peak RSS of `corral mcp` while 200 MB of output go through
//     run_command, with the default budget and with max_output_chars 1e12;
//     reference: a process that keeps all of it, as a tool built on
//     os/exec's Output does.
//
// Run from the repository root: go run ./bench/shell
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/mcpserver"
	"github.com/corralrun/corral/shell"
)

func main() {
	n := flag.Int("n", 300, "commands per measurement")
	timeouts := flag.Int("timeouts", 10, "timed-out commands to measure")
	bin := flag.String("corral", "", "corral binary for the MCP measurement (default: build one)")
	skipMCP := flag.Bool("skip-mcp", false, "skip the 200 MB MCP measurement")
	early := flag.Int("early", 40, "stops landing as a command starts to measure")
	keepAll := flag.Bool("keep-all", false, "internal: be the keep-everything reference of the 200 MB measurement")
	flag.Parse()
	if *keepAll {
		keepAllOutput()
		return
	}
	ctx := context.Background()
	tool := &shell.Tool{Dir: os.TempDir()}
	defer tool.Close()

	fmt.Println("## per-command time of `true` (ms)")
	fmt.Printf("%-44s %8s %8s %8s\n", "", "median", "p90", "p99")
	sess, err := tool.NewSession(ctx)
	benchutil.Check(err)
	report("corral session (shell.Session.Run)", measure(*n, func() {
		res, err := sess.Run(ctx, shell.Request{Command: "true"})
		benchutil.Check(err)
		must(res.ExitCode == 0, "true failed")
	}))
	// A workspace outside /tmp, which the sandbox gives a private one.
	cache, err := os.UserCacheDir()
	benchutil.Check(err)
	benchutil.Check(os.MkdirAll(cache, 0o700))
	ws := benchutil.TempDir(cache, "corral-bench-shell-")
	defer os.RemoveAll(ws)
	boxed := &shell.Tool{Dir: ws, Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}}
	defer boxed.Close()
	if bsess, err := boxed.NewSession(ctx); err != nil {
		fmt.Printf("%-44s %s\n", "corral session, sandbox workspace", "not measured: "+err.Error())
	} else {
		report("corral session, sandbox workspace", measure(*n, func() {
			res, err := bsess.Run(ctx, shell.Request{Command: "true"})
			benchutil.Check(err)
			must(res.ExitCode == 0, "true failed")
		}))
		bsess.Close()
	}
	report("corral one-shot (shell.Tool.Run)", measure(*n, func() {
		res, err := tool.Run(ctx, shell.Request{Command: "true"})
		benchutil.Check(err)
		must(res.ExitCode == 0, "true failed")
	}))
	report("reference: bash -c true via os/exec", measure(*n, func() {
		benchutil.Check(exec.Command("bash", "-c", "true").Run())
	}))
	lb := newLongBash()
	report("reference: long-lived bash + sentinel", measure(*n, func() { lb.run("true") }))
	lb.close()
	fmt.Printf("%-44s %8s   (cited, not measured here)\n", "peer: agent framework persistent shell", "~51")

	fmt.Println()
	fmt.Println("## timeout in a session: return past the deadline (ms), command dies on SIGTERM")
	var late []time.Duration
	for i := 0; i < *timeouts; i++ {
		_, err := sess.Run(ctx, shell.Request{Command: "cd /; export BENCH_KEEP=" + strconv.Itoa(i)})
		benchutil.Check(err)
		const deadline = 500 * time.Millisecond
		start := time.Now()
		res, err := sess.Run(ctx, shell.Request{Command: "sleep 60", Timeout: deadline})
		benchutil.Check(err)
		late = append(late, time.Since(start)-deadline)
		must(res.TimedOut && !res.SessionRestarted, "timeout lost the session")
		res, err = sess.Run(ctx, shell.Request{Command: "pwd; echo $BENCH_KEEP"})
		benchutil.Check(err)
		must(res.Stdout == "/\n"+strconv.Itoa(i)+"\n", "state lost after timeout: "+res.Stdout)
	}
	report("corral session, 500 ms timeout", late)
	fmt.Printf("%-44s %8s\n", "target", "<= 100")
	fmt.Println("(after every timeout the next command saw the same cwd and exports)")

	fmt.Println()
	fmt.Println("## a stop that lands as the command starts: time to return (ms)")
	fmt.Printf("%-44s %8s %8s %8s\n", "", "median", "p90", "max")
	var kills, short []time.Duration
	for i := 0; i < *early; i++ {
		res, err := sess.Start(ctx, shell.Request{Command: "sleep 60"})
		benchutil.Check(err)
		j, _ := sess.Job(res.JobID)
		start := time.Now()
		j.Kill()
		kills = append(kills, time.Since(start))
		start = time.Now()
		_, err = sess.Run(ctx, shell.Request{Command: "sleep 60", Timeout: time.Duration(1+i%20) * time.Millisecond})
		benchutil.Check(err)
		short = append(short, time.Since(start))
	}
	reportMax("job_kill right after a background start", kills)
	reportMax("run_command, timeout 1-20 ms", short)
	fmt.Printf("%-44s %8s\n", "before: 1 in 8 sat out the grace", "2000")
	sess.Close()

	fmt.Println()
	fmt.Println("## MCP ping round trip over stdio, in process (ms)")
	fmt.Printf("%-44s %8s %8s %8s\n", "", "median", "p90", "p99")
	report("corral's framing (mcpserver.ServeStdio)", pings(*n, corralStdio(tool)))
	report("reference: the SDK's own stdio transport", pings(*n, sdkStdio))

	if *skipMCP {
		return
	}
	fmt.Println()
	fmt.Println("## 200 MB of output through run_command: peak RSS of `corral mcp`")
	hwm, took := mcp200(*bin, nil)
	fmt.Printf("%-44s %8.1f MiB  (%.1f s)\n", "corral mcp", float64(hwm)/(1<<20), took.Seconds())
	hwm, took = mcp200(*bin, map[string]any{"max_output_chars": 1e12})
	fmt.Printf("%-44s %8.1f MiB  (%.1f s)\n", "corral mcp, max_output_chars 1e12", float64(hwm)/(1<<20), took.Seconds())
	fmt.Printf("%-44s %8s MiB\n", "before the cap, max_output_chars 1e12", "3700")
	hwm, took = keepAllReference()
	fmt.Printf("%-44s %8.1f MiB  (%.1f s)\n", "reference: os/exec Output, keeps it all", float64(hwm)/(1<<20), took.Seconds())
	fmt.Printf("%-44s %8s MiB  (cited, not measured here)\n", "peer: agent framework shell tool", "400-800")
	fmt.Printf("%-44s %8s MiB\n", "target", "<= 64")
}

func reportMax(name string, d []time.Duration) {
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	fmt.Printf("%-44s %8.2f %8.2f %8.2f\n", name, q(0.5), q(0.9), q(1))
}

// serve connects a client to a server served by serve over two pipes.
func serve(serve func(ctx context.Context, in io.ReadCloser, out io.Writer)) (*mcp.ClientSession, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cr, sw := io.Pipe() // server to client
	sr, cw := io.Pipe() // client to server
	done := make(chan struct{})
	go func() { defer close(done); serve(ctx, sr, sw); sw.Close() }()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	benchutil.Check(err)
	return cs, func() { cs.Close(); cancel(); sr.Close(); <-done }
}

func corralStdio(tool *shell.Tool) func(context.Context, io.ReadCloser, io.Writer) {
	return func(ctx context.Context, in io.ReadCloser, out io.Writer) {
		srv, err := mcpserver.New(mcpserver.Config{Tool: tool})
		benchutil.Check(err)
		srv.ServeStdio(ctx, in, out)
	}
}

func sdkStdio(ctx context.Context, in io.ReadCloser, out io.Writer) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: nopCloser{out}})
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func pings(n int, server func(context.Context, io.ReadCloser, io.Writer)) []time.Duration {
	cs, stop := serve(server)
	defer stop()
	return measure(n, func() { benchutil.Check(cs.Ping(context.Background(), nil)) })
}

func measure(n int, f func()) []time.Duration {
	for i := 0; i < 10; i++ { // warm up
		f()
	}
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		f()
		d[i] = time.Since(start)
	}
	return d
}

func report(name string, d []time.Duration) {
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	fmt.Printf("%-44s %8.2f %8.2f %8.2f\n", name, q(0.5), q(0.9), q(0.99))
}

// longBash is the reference session mechanism: one long-lived bash reading
// commands on stdin and a random sentinel after each.
type longBash struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func newLongBash() *longBash {
	cmd := exec.Command("bash", "--noprofile", "--norc")
	in, err := cmd.StdinPipe()
	benchutil.Check(err)
	out, err := cmd.StdoutPipe()
	benchutil.Check(err)
	benchutil.Check(cmd.Start())
	return &longBash{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

func (l *longBash) run(c string) {
	var raw [8]byte
	rand.Read(raw[:])
	s := hex.EncodeToString(raw[:])
	fmt.Fprintf(l.in, "%s </dev/null\nprintf '\\n%s %%d\\n' $?\n", c, s)
	for {
		line, err := l.out.ReadString('\n')
		benchutil.Check(err)
		if strings.HasPrefix(line, s) {
			return
		}
	}
}

func (l *longBash) close() {
	l.in.Close()
	l.cmd.Wait()
}

func mcp200(bin string, extra map[string]any) (int64, time.Duration) {
	if bin == "" {
		dir := benchutil.TempDir("", "corral-bench-")
		defer os.RemoveAll(dir)
		bin = benchutil.BuildCorral(dir) // corral mcp runs corral-mcp, beside corral
	}
	spill := benchutil.TempDir("", "corral-bench-spill-")
	defer os.RemoveAll(spill)
	cmd := exec.Command(bin, "mcp", "--spill-dir", spill)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	benchutil.Check(err)
	defer cs.Close()
	start := time.Now()
	args := map[string]any{"command": bigOutput}
	for k, v := range extra {
		args[k] = v
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: args})
	benchutil.Check(err)
	took := time.Since(start)
	b, _ := json.Marshal(res.StructuredContent)
	var r struct {
		StdoutBytes int64 `json:"stdout_bytes"`
	}
	benchutil.Check(json.Unmarshal(b, &r))
	must(r.StdoutBytes >= 200000000, "output did not go through")
	hwm, err := procfs.Memory(cmd.Process.Pid, "VmHWM")
	benchutil.Check(err)
	return hwm, took
}

// bigOutput is the command of the 200 MB measurement.
const bigOutput = "head -c 200000000 /dev/zero | tr '\\0' a; echo; echo end"

// keepAllReference runs this program again as the keep-everything
// reference and returns its peak RSS and how long the command took.
func keepAllReference() (int64, time.Duration) {
	self, err := os.Executable()
	benchutil.Check(err)
	out, err := exec.Command(self, "-keep-all").Output()
	benchutil.Check(err)
	var hwm, ns int64
	_, err = fmt.Sscan(string(out), &hwm, &ns)
	benchutil.Check(err)
	return hwm, time.Duration(ns)
}

// keepAllOutput is the reference: it runs the command with os/exec's
// Output, which keeps every byte, and prints its own peak RSS and the
// time taken.
func keepAllOutput() {
	start := time.Now()
	out, err := exec.Command("bash", "-c", bigOutput).Output()
	benchutil.Check(err)
	took := time.Since(start)
	must(len(out) >= 200000000, "output did not come through")
	hwm, err := procfs.Memory(0, "VmHWM")
	benchutil.Check(err)
	fmt.Println(hwm, took.Nanoseconds())
}

func must(ok bool, msg string) {
	if !ok {
		fmt.Fprintln(os.Stderr, "bench:", msg)
		benchutil.Exit(1)
	}
}
