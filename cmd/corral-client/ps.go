package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
)

func init() {
	register("ps", psMain)
}

const psUsage = `Usage: corral ps [flags]

Lists executions, newest first: the last 20 by default, only queued and
running ones with --active. --cursor continues a listing where the
previous page ended (the cursor is printed after a full page). With
--json the executions are summaries, without their output (corral logs
ID --json ends with the whole record).
` + clientEnvHelp + `
Flags:
`

func psMain(args []string) int {
	fs := flag.NewFlagSet("ps", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), psUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	agent := fs.String("agent", "", "only executions of `AGENT`")
	status := fs.String("status", "", "only these `STATUSES` (comma-separated)")
	active := fs.Bool("active", false, "only queued and running executions")
	limit := fs.Int("limit", 20, "at most `N` executions (1 to 1000)")
	cursor := fs.String("cursor", "", "continue a listing from `CURSOR`")
	pos, rest, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	if len(pos)+len(rest) > 0 {
		return usageError("ps", "unexpected argument %q", append(pos, rest...)[0])
	}
	o := client.ListOptions{Agent: *agent, Limit: *limit, Cursor: *cursor}
	if *active {
		o.Statuses = []corral.Status{corral.StatusQueued, corral.StatusRunning}
	}
	if *status != "" {
		for _, s := range strings.Split(*status, ",") {
			st, err := corral.ParseStatus(strings.TrimSpace(s))
			if err != nil {
				return usageError("ps", "%v", err)
			}
			o.Statuses = append(o.Statuses, st)
		}
	}
	list, next, err := cf.client().Executions(context.Background(), o)
	if err != nil {
		return apiFail("ps", err)
	}
	if cf.json {
		printJSON(map[string]any{"executions": list, "next_cursor": next})
		return exitOK
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tATTEMPT\tTRIGGER\tCREATED\tDURATION\tINPUT\tERROR")
	for _, e := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Agent, statusText(e), attemptText(e), e.Trigger, shortTime(&e.CreatedAt), durationMS(e.DurationMS), truncate(e.Input, 30), truncate(e.Error, 50))
	}
	tw.Flush()
	if next != "" {
		fmt.Fprintf(os.Stderr, "more: corral ps --cursor %s\n", next)
	}
	return exitOK
}

// statusText is e's status as ps shows it: with the slot it holds, or
// the time a waiting attempt runs.
func statusText(e *client.Execution) string {
	switch {
	case e.Status == corral.StatusRunning && e.Slot > 0:
		return fmt.Sprintf("running[%d]", e.Slot)
	case e.Status == corral.StatusWaiting && e.NextAttemptAt != nil:
		return "waiting→" + shortTime(e.NextAttemptAt)
	}
	return string(e.Status)
}

// attemptText is "N/M" for a run its agent retries, "N" otherwise, and
// says when the attempt was retried.
func attemptText(e *client.Execution) string {
	s := fmt.Sprint(e.Attempt)
	if e.MaxAttempts > 1 {
		s += fmt.Sprintf("/%d", e.MaxAttempts)
	}
	if e.RetriedBy != "" {
		s += "→retried"
	}
	return s
}
