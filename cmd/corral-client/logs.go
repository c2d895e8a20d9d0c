package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/corralrun/corral/client"
)

func init() {
	register("logs", logsMain)
}

const logsUsage = `Usage: corral logs [flags] ID

Prints the log of execution ID: its stdout lines on stdout, stderr lines on
stderr, a headless agent's stream events as JSON lines on stdout, and the
service's own notes as "# ..." lines on stderr. Secrets were redacted when
the log was written. With -f, follows the log live until the run ends. A
finished run's log is replayed from its file; it never disappears.

With --json, prints each log record as one JSON object per line
({"seq","time","stream","text"}), then the execution when it has ended.
` + clientEnvHelp + `
Flags:
`

func logsMain(args []string) int {
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), logsUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	follow := fs.Bool("f", false, "follow the log until the run ends")
	after := fs.Int("after", 0, "start after record `N`")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	if len(pos) != 1 {
		return usageError("logs", "want one execution ID")
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	end, err := cf.client().Follow(ctx, pos[0], *after, *follow, func(ev client.Event) error {
		r := ev.Record
		if r == nil {
			return nil
		}
		if cf.json {
			return enc.Encode(r)
		}
		switch r.Stream {
		case "stderr":
			fmt.Fprintln(os.Stderr, r.Text)
		case "system":
			fmt.Fprintln(os.Stderr, "# "+r.Text)
		default:
			fmt.Println(r.Text)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return 130
		}
		return apiFail("logs", err)
	}
	if cf.json && end != nil && end.Status.Terminal() {
		enc.Encode(end)
	}
	if !cf.json && end != nil {
		if end.RetryOf != "" {
			fmt.Fprintf(os.Stderr, "# attempt %d, retry of %s: %s\n", end.Attempt, end.RetryOf, end.RetryReason)
		}
		if end.RetriedBy != "" {
			fmt.Fprintf(os.Stderr, "# retried as %s (corral logs -f %s)\n", end.RetriedBy, end.RetriedBy)
		}
	}
	return exitOK
}
