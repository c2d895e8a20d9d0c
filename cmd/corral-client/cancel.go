package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/corralrun/corral"
)

func init() {
	register("cancel", cancelMain)
}

const cancelUsage = `Usage: corral cancel [flags] ID...

Cancels executions. A queued one is cancelled at once. A running one is
stopped gracefully (SIGTERM for shell agents, SIGINT for headless ones, then
SIGKILL after the agent's grace period) and recorded as cancelled once its
whole process tree is gone, unless it finished by itself first. Its slot,
and only its slot, is then free. Cancelling a finished execution fails.

With --wait, waits until each run has ended and prints its final status.
` + clientEnvHelp + `
Flags:
`

func cancelMain(args []string) int {
	fs := flag.NewFlagSet("cancel", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), cancelUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	wait := fs.Bool("wait", false, "wait until the runs have ended")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	if len(pos) == 0 {
		return usageError("cancel", "want at least one execution ID")
	}
	ctx := context.Background()
	c := cf.client()
	code := exitOK
	for _, id := range pos {
		e, err := c.Cancel(ctx, id)
		if err != nil {
			code = apiFail("cancel", err)
			continue
		}
		if *wait && !e.Status.Terminal() {
			if end, err := c.Follow(ctx, id, 1<<30, true, nil); err == nil {
				e = end
			}
		}
		if cf.json {
			printJSON(e)
			continue
		}
		switch e.Status {
		case corral.StatusRunning:
			fmt.Printf("%s: stopping\n", id)
		default:
			fmt.Printf("%s: %s\n", id, e.Status)
		}
	}
	return code
}
