package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
)

func init() {
	register("submit", submitMain)
}

const submitUsage = `Usage: corral submit [flags] AGENT INPUT

Submits a task: INPUT is the command line of a shell agent, or the prompt
of a headless agent. Prints the execution id (the whole execution with
--json). When the agent is at capacity and does not queue, the task is
refused at once with "agent at capacity (N/N parallel tasks running)".

With --wait, shows the run's progress on stderr until it ends, then prints
its output (a headless agent's final result) and exits with its outcome;
interrupting the wait (^C) leaves the task running (cancel it with corral
cancel ID).

Exit status: 0 submitted (with --wait: succeeded); 1 failed, cancelled or
interrupted; 2 bad usage; 69 service unreachable; 75 agent at capacity.
` + clientEnvHelp + `
Flags:
`

func submitMain(args []string) int {
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), submitUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	wait := fs.Bool("wait", false, "wait for the run to end, showing its progress")
	timeout := fs.Duration("timeout", 0, "budget of this run (default: the agent's)")
	pos, rest, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	pos = append(pos, rest...)
	if len(pos) < 2 {
		return usageError("submit", "want AGENT and INPUT")
	}
	agent, input := pos[0], strings.Join(pos[1:], " ")
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	c := cf.client()
	e, err := c.Submit(ctx, agent, input, *timeout)
	if err != nil {
		if ae, ok := err.(*client.Error); ok && ae.Execution != nil && cf.json {
			printJSON(ae.Execution)
		}
		return apiFail("submit", err)
	}
	if !*wait {
		if cf.json {
			printJSON(e)
		} else {
			fmt.Println(e.ID)
			if e.Status == corral.StatusQueued {
				fmt.Fprintf(os.Stderr, "corral submit: %s is queued (agent %s at capacity)\n", e.ID, e.Agent)
			}
		}
		return exitOK
	}
	end, err := waitRun(ctx, c, e)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "\ncorral submit: stopped waiting; %s goes on (corral cancel %s to stop it)\n", e.ID, e.ID)
			return 130
		}
		return apiFail("submit", err)
	}
	return printOutcome(end, cf.json)
}

// waitRun follows the run of e to its end, through every attempt its
// agent's retry policy makes, and returns the last attempt.
func waitRun(ctx context.Context, c *client.Client, e *client.Execution) (*client.Execution, error) {
	for {
		end, err := waitWithProgress(ctx, c, e)
		if err != nil || end == nil || end.RetriedBy == "" {
			return end, err
		}
		next, err := c.Execution(ctx, end.RetriedBy)
		if err != nil {
			return end, err
		}
		fmt.Fprintf(os.Stderr, "corral submit: attempt %d %s (%s); %s\n", end.Attempt, end.Status, end.ErrorType, next.RetryReason)
		e = next
	}
}

// progressView is the one-line progress display of a run being waited
// for on a terminal (status changes elsewhere).
type progressView struct {
	e      *client.Execution
	tty    bool
	start  time.Time
	status corral.Status
	lines  int
	last   string
	frame  int
}

// progress is an update of the run: its status, or a line it printed.
type progress struct {
	status corral.Status
	line   string
}

func (v *progressView) show(final bool) {
	if !v.tty {
		return
	}
	frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
	v.frame++
	icon := string(frames[v.frame%len(frames)])
	if final {
		icon = "•"
	}
	fmt.Fprintf(os.Stderr, "\r\033[K%s %s  %s  %s  %d lines  %s", icon, v.e.ID, v.status, time.Since(v.start).Round(100*time.Millisecond), v.lines, truncate(v.last, 40))
	if final {
		fmt.Fprintln(os.Stderr)
	}
}

func (v *progressView) setStatus(st corral.Status) {
	if st != "" && st != v.status {
		v.status = st
		if !v.tty {
			fmt.Fprintf(os.Stderr, "corral submit: %s %s\n", v.e.ID, v.status)
		}
	}
}

func (v *progressView) apply(u progress) {
	v.setStatus(u.status)
	if u.line != "" {
		v.lines++
		v.last = u.line
	}
}

// waitWithProgress follows e's event stream, showing its progress, until
// the attempt ends.
func waitWithProgress(ctx context.Context, c *client.Client, e *client.Execution) (*client.Execution, error) {
	v := &progressView{e: e, tty: isTerminal(os.Stderr), start: time.Now(), status: e.Status}
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	updates := make(chan progress, 64)
	type ended struct {
		e   *client.Execution
		err error
	}
	result := make(chan ended, 1)
	go func() {
		end, err := c.Follow(ctx, e.ID, 0, true, func(ev client.Event) error {
			switch {
			case ev.Execution != nil:
				updates <- progress{status: ev.Execution.Status}
			case ev.Record != nil && ev.Record.Stream != "system":
				updates <- progress{line: ev.Record.Text}
			}
			return nil
		})
		result <- ended{end, err}
	}()
	for {
		select {
		case <-ticker.C:
			v.show(false)
		case u := <-updates:
			v.apply(u)
			v.show(false)
		case r := <-result:
			// The stream's last updates and its end arrive together:
			// take the updates first, so that no status line is lost.
			for drained := false; !drained; {
				select {
				case u := <-updates:
					v.apply(u)
				default:
					drained = true
				}
			}
			if r.e != nil {
				v.setStatus(r.e.Status)
			}
			v.show(true)
			return r.e, r.err
		}
	}
}

// printOutcome prints a finished execution and returns the exit status.
func printOutcome(e *client.Execution, asJSON bool) int {
	if asJSON {
		printJSON(e)
	} else {
		out := e.Stdout
		if e.Result != "" {
			out = e.Result
		}
		fmt.Print(out)
		if out != "" && !strings.HasSuffix(out, "\n") {
			fmt.Println()
		}
		fmt.Fprint(os.Stderr, e.Stderr)
		if e.Status != corral.StatusSucceeded {
			fmt.Fprintf(os.Stderr, "corral: %s %s", e.ID, e.Status)
			if e.ErrorType != "" {
				fmt.Fprintf(os.Stderr, " (%s)", e.ErrorType)
			}
			if e.Error != "" {
				fmt.Fprintf(os.Stderr, ": %s", e.Error)
			}
			fmt.Fprintln(os.Stderr)
		}
	}
	if e.Status == corral.StatusSucceeded {
		return exitOK
	}
	return exitFailed
}
