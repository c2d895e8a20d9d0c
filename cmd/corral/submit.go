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
	register("submit", "submit a task to an agent of the task service", submitMain)
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
	end, err := waitWithProgress(ctx, c, e)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "\ncorral submit: stopped waiting; %s goes on (corral cancel %s to stop it)\n", e.ID, e.ID)
			return 130
		}
		return apiFail("submit", err)
	}
	return printOutcome(end, cf.json)
}

// waitWithProgress follows e's event stream, showing a one-line progress
// display on a terminal (status changes otherwise) until the run ends.
func waitWithProgress(ctx context.Context, c *client.Client, e *client.Execution) (*client.Execution, error) {
	tty := isTerminal(os.Stderr)
	start := time.Now()
	status := e.Status
	lines := 0
	last := ""
	frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
	frame := 0
	show := func(final bool) {
		if tty {
			frame++
			icon := string(frames[frame%len(frames)])
			if final {
				icon = "•"
			}
			fmt.Fprintf(os.Stderr, "\r\033[K%s %s  %s  %s  %d lines  %s", icon, e.ID, status, time.Since(start).Round(100*time.Millisecond), lines, truncate(last, 40))
			if final {
				fmt.Fprintln(os.Stderr)
			}
		}
	}
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	done := make(chan struct{})
	defer close(done)
	type progress struct {
		status corral.Status
		line   string
	}
	updates := make(chan progress, 64)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				select {
				case updates <- progress{}:
				default:
				}
			}
		}
	}()
	result := make(chan struct {
		e   *client.Execution
		err error
	}, 1)
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
		result <- struct {
			e   *client.Execution
			err error
		}{end, err}
	}()
	setStatus := func(st corral.Status) {
		if st != "" && st != status {
			status = st
			if !tty {
				fmt.Fprintf(os.Stderr, "corral submit: %s %s\n", e.ID, status)
			}
		}
	}
	apply := func(u progress) {
		setStatus(u.status)
		if u.line != "" {
			lines++
			last = u.line
		}
	}
	for {
		select {
		case u := <-updates:
			apply(u)
			show(false)
		case r := <-result:
			// The stream's last updates and its end arrive together:
			// take the updates first, so that no status line is lost.
			for drained := false; !drained; {
				select {
				case u := <-updates:
					apply(u)
				default:
					drained = true
				}
			}
			if r.e != nil {
				setStatus(r.e.Status)
			}
			show(true)
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
