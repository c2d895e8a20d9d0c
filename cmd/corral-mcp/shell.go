package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/shell"
)

func init() {
	register("shell", shellMain)
}

const shellUsage = `Usage: corral shell [flags] [-c COMMAND]...

Runs commands in a persistent shell session, as an agent would through the
MCP server: cd, exported variables, functions, aliases and shell options
carry over from one command to the next, and survive timeouts, exit, set -e
and syntax errors. Each command runs under corral's supervision: its
timeout holds, its whole process tree is gone when it returns, and its
stdin is /dev/null.

Commands are read from standard input, one per line (end a line with \ to
continue it on the next), or given with -c. Output streams through live;
then a status line on stderr says how the command ended. With --json, one
JSON object per command is printed instead (stdout, stderr, exit_code,
timed_out, truncated, duration_ms, full_output_path, session_restarted,
cwd, containment, killed, ...). With --text, the text a model would see.

Lines starting with ":" are corral's own:
  :bg COMMAND      start COMMAND as a background job
  :jobs            list the background jobs
  :out JOB [SECS]  show a job's new output (waiting up to SECS for some)
  :kill JOB        stop a job and its process tree
  :reset           start the session afresh
  :env             show the environment probe
  :help            show this list
  :quit            end the session (as does end of input)

The session's state (its variables, exported ones included) and the jobs'
logs are kept private to the user and removed when corral shell exits;
those a killed corral left are removed at the next start.

Exit status: that of the last command (124 if it timed out); 125 when
corral itself fails; 130 on interrupt at the prompt.

Flags:
`

// toolFlags registers the flags that configure a shell.Tool, the sandbox
// flags among them (workdirName names the working-directory flag), and
// returns a function building it after parsing.
func toolFlags(fs *flag.FlagSet, workdirName string) func() (*shell.Tool, error) {
	sbf := cliflag.AddSandbox(fs, workdirName)
	var (
		sh          = fs.String("shell", "bash", "the shell: bash (sessions need it), sh, zsh, or a path")
		reanchor    = fs.Bool("reanchor", false, "start every command in --"+workdirName+": cd does not carry over")
		timeout     = fs.Duration("timeout", shell.DefaultTimeout, "default command timeout")
		maxTimeout  = fs.Duration("max-timeout", shell.DefaultMaxTimeout, "longest timeout a command may ask for")
		grace       = cliflag.Grace(fs, "on timeout")
		maxChars    = fs.Int("max-output-chars", shell.DefaultMaxOutputChars, "characters of stdout+stderr kept in a result (head and tail), unless a command asks for another budget")
		charsCap    = fs.Int("output-chars-cap", shell.DefaultOutputCharsCap, "the largest output budget a command may ask for")
		spillDir    = fs.String("spill-dir", "", "`DIR` for full-output files and job logs (default: a temporary directory removed at exit)")
		envMode     = fs.String("env", "inherit", "environment passed on: inherit, allowlist or clean")
		containment = fs.String("containment", "auto", "containment tier: auto, cgroup, subreaper or pgroup")
		audit       = fs.String("audit", "", "append an audit trail as JSON lines to `FILE` (- for stderr); secrets are redacted")
		probe       = fs.String("probe-tools", strings.Join(shell.DefaultProbeTools, ","), "comma-separated `PROGRAMS` whose versions the environment probe reports")
		allowEnv    cliflag.StringList
		setEnv      cliflag.StringList
		allow       cliflag.StringList
		deny        cliflag.StringList
	)
	fs.Var(&allowEnv, "allow-env", "with --env allowlist, a variable `NAME` to keep (repeatable; NAME* keeps a prefix)")
	fs.Var(&setEnv, "setenv", "add `KEY=VALUE` to the environment (repeatable)")
	fs.Var(&allow, "allow", "policy: every simple command must match one of these `REGEXP`s (repeatable; a guardrail, not a sandbox)")
	fs.Var(&deny, "deny", "policy: deny commands with a line or simple command matching `REGEXP` (repeatable)")
	return func() (*shell.Tool, error) {
		t := &shell.Tool{
			Shell: *sh, Reanchor: *reanchor, Timeout: *timeout, MaxTimeout: *maxTimeout,
			Grace: grace(), MaxOutputChars: *maxChars, OutputCharsCap: *charsCap, SpillDir: *spillDir,
			EnvAllow: allowEnv, Env: setEnv,
			Policy: shell.Policy{Allow: allow, Deny: deny},
		}
		var err error
		if t.Dir, err = sbf.Dir(); err != nil {
			return nil, err
		}
		if t.Sandbox, err = sbf.Settings(); err != nil {
			return nil, err
		}
		t.ProbeTools = []string{}
		for _, p := range strings.Split(*probe, ",") {
			if p = strings.TrimSpace(p); p != "" {
				t.ProbeTools = append(t.ProbeTools, p)
			}
		}
		if t.EnvMode, err = corral.ParseEnvMode(*envMode); err != nil {
			return nil, err
		}
		if t.Containment, err = corral.ParseContainment(*containment); err != nil {
			return nil, err
		}
		if *maxChars <= 0 || *charsCap <= 0 {
			return nil, fmt.Errorf("--max-output-chars and --output-chars-cap must be positive")
		}
		switch *audit {
		case "":
		case "-":
			t.Audit = shell.AuditJSON(os.Stderr)
		default:
			f, err := os.OpenFile(*audit, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				return nil, fmt.Errorf("--audit: %w", err)
			}
			t.Audit = shell.AuditJSON(f) // closed at exit
		}
		return t, nil
	}
}

func shellMain(args []string) int {
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), shellUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), strings.ReplaceAll(cliflag.SandboxHelp, "--workdir", "--dir"))
	}
	build := toolFlags(fs, "dir")
	asJSON := fs.Bool("json", false, "print each result as one JSON object instead of streaming the output")
	asText := fs.Bool("text", false, "print each result as the text a model sees instead of streaming the output")
	var cmds cliflag.StringList
	fs.Var(&cmds, "c", "run `COMMAND` in the session (repeatable), then exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return cliflag.ExitCorralFailed
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "corral shell: unexpected argument %q (pass commands with -c or on stdin)\n", fs.Arg(0))
		return cliflag.ExitCorralFailed
	}
	tool, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral shell:", err)
		return cliflag.ExitCorralFailed
	}
	defer tool.Close()
	sess, err := tool.NewSession(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral shell:", err)
		return cliflag.ExitCorralFailed
	}
	defer sess.Close()
	r := &repl{sess: sess, json: *asJSON, text: *asText, out: os.Stdout, errOut: os.Stderr}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, cliflag.StopSignals...)
	defer signal.Stop(sigs)
	if len(cmds) > 0 {
		for _, c := range cmds {
			if r.line(c, sigs) {
				break
			}
		}
		return r.status
	}
	return r.loop(os.Stdin, sigs)
}

// repl runs lines in a session and prints what happened.
type repl struct {
	sess      *shell.Session
	json      bool
	text      bool
	out       io.Writer
	errOut    io.Writer
	status    int
	outMu     sync.Mutex
	lastInput time.Time
}

func (r *repl) loop(in *os.File, sigs chan os.Signal) int {
	interactive := false
	if fi, err := in.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		interactive = true
		fmt.Fprintln(r.errOut, "corral shell: commands run in a persistent session; :help lists corral's own commands, :quit or Ctrl-D ends.")
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var pending strings.Builder
		for sc.Scan() {
			l := sc.Text()
			if strings.HasSuffix(l, `\`) {
				pending.WriteString(strings.TrimSuffix(l, `\`) + "\n")
				continue
			}
			pending.WriteString(l)
			lines <- pending.String()
			pending.Reset()
		}
		if pending.Len() > 0 {
			lines <- pending.String()
		}
	}()
	for {
		if interactive {
			fmt.Fprintf(r.errOut, "corral:%s$ ", r.sess.Cwd())
		}
		select {
		case l, ok := <-lines:
			if !ok {
				return r.status
			}
			if r.line(l, sigs) {
				return r.status
			}
		case <-sigs:
			fmt.Fprintln(r.errOut)
			return 130
		}
	}
}

// line runs one input line; it reports true to end the session.
func (r *repl) line(l string, sigs chan os.Signal) bool {
	trimmed := strings.TrimSpace(l)
	switch {
	case trimmed == "":
		return false
	case strings.HasPrefix(trimmed, ":"):
		return r.builtin(trimmed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
		}
	}()
	req := shell.Request{Command: l}
	if !r.json && !r.text {
		req.OnOutput = func(stream string, p []byte) {
			r.outMu.Lock()
			defer r.outMu.Unlock()
			if stream == "stderr" {
				r.errOut.Write(p)
			} else {
				r.out.Write(p)
			}
		}
	}
	res, err := r.sess.Run(ctx, req)
	if err != nil {
		fmt.Fprintln(r.errOut, "corral shell:", err)
		r.status = cliflag.ExitCorralFailed
		return false
	}
	r.status = res.ExitCode
	switch {
	case res.Denied:
		r.status = cliflag.ExitCorralFailed
	case res.TimedOut:
		r.status = cliflag.ExitTimedOut
	case res.Signal != "":
		r.status = 128 + signalNumber(res)
	}
	r.show(res)
	return false
}

func signalNumber(res *shell.Result) int {
	if res.Proc != nil {
		return int(res.Proc.Signal)
	}
	return 0
}

func (r *repl) show(res *shell.Result) {
	switch {
	case r.json:
		enc := json.NewEncoder(r.out)
		enc.SetEscapeHTML(false)
		enc.Encode(res)
	case r.text:
		fmt.Fprint(r.out, res.Text())
	default:
		var b strings.Builder
		fmt.Fprintf(&b, "[%s", res.Status())
		if res.Denied {
			fmt.Fprintf(&b, ": %s", res.Reason)
		} else if res.JobID == "" || res.Proc != nil {
			fmt.Fprintf(&b, " · %d ms · cwd %s", res.DurationMS, res.Cwd)
		}
		if res.SessionRestarted {
			b.WriteString(" · state not saved: the session continues from before this command")
		}
		if res.Truncated && res.FullOutputPath != "" {
			b.WriteString(" · full output " + res.FullOutputPath)
		}
		for _, n := range res.Notes {
			b.WriteString(" · " + n)
		}
		b.WriteString("]\n")
		fmt.Fprint(r.errOut, b.String())
	}
}

func (r *repl) builtin(l string) bool {
	name, rest, _ := strings.Cut(l, " ")
	rest = strings.TrimSpace(rest)
	ctx := context.Background()
	switch name {
	case ":quit", ":exit", ":q":
		return true
	case ":help":
		fmt.Fprint(r.errOut, ":bg COMMAND | :jobs | :out JOB [SECS] | :kill JOB | :reset | :env | :quit\n")
	case ":bg":
		res, err := r.sess.Start(ctx, shell.Request{Command: rest})
		if err != nil {
			fmt.Fprintln(r.errOut, "corral shell:", err)
			return false
		}
		r.show(res)
	case ":jobs":
		r.printJSON(r.sess.Jobs())
	case ":out", ":kill":
		id, secs, _ := strings.Cut(rest, " ")
		j, ok := r.sess.Job(id)
		if !ok {
			fmt.Fprintf(r.errOut, "corral shell: no job %q (:jobs lists them)\n", id)
			return false
		}
		if name == ":kill" {
			r.printJSON(j.Kill())
			return false
		}
		wait, _ := strconv.ParseFloat(strings.TrimSpace(secs), 64)
		o := j.Output(ctx, -1, time.Duration(wait*float64(time.Second)), 0)
		fmt.Fprint(r.out, o.Output)
		fmt.Fprintf(r.errOut, "[%s %s · next %d]\n", o.ID, o.Status, o.Next)
	case ":reset":
		if err := r.sess.Reset(ctx); err != nil {
			fmt.Fprintln(r.errOut, "corral shell:", err)
		}
	case ":env":
		e, err := r.sess.Environment(ctx)
		if err != nil {
			fmt.Fprintln(r.errOut, "corral shell:", err)
			return false
		}
		r.printJSON(e)
	default:
		fmt.Fprintf(r.errOut, "corral shell: unknown command %s (:help lists them)\n", name)
	}
	return false
}

func (r *repl) printJSON(v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(r.out, string(b))
}
