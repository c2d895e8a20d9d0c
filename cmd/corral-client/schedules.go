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
	register("schedules", schedulesMain)
}

const schedulesUsage = `Usage:
  corral schedules list [AGENT] [--limit N] [--cursor CURSOR]
  corral schedules create AGENT --cron EXPR --input INPUT [--tz ZONE] [--missed skip|run_once] [--disabled]
  corral schedules update AGENT ID [--cron EXPR] [--input INPUT] [--tz ZONE] [--missed ...] [--enable|--disable]
  corral schedules delete AGENT ID
  corral schedules trigger AGENT ID

A schedule submits INPUT to AGENT on a cron expression in a time zone
(IANA name, default UTC): five fields (minute hour day month weekday), six
with seconds first, or a descriptor (@hourly, @daily, "@every 90s").
Fires missed while the service was down are skipped (--missed skip, the
default) or run once (--missed run_once). trigger runs the task now. list
without AGENT lists the schedules of every agent, oldest first, a page at
a time: after a full page it prints the command that lists the next.
` + clientEnvHelp + `
Flags:
`

func schedulesMain(args []string) int {
	fs := flag.NewFlagSet("schedules", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), schedulesUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	cron := fs.String("cron", "", "cron `EXPR`, e.g. \"0 9 * * 1-5\"")
	tz := fs.String("tz", "", "time `ZONE`, e.g. Europe/Paris (default UTC)")
	input := fs.String("input", "", "task `INPUT`: command line or prompt")
	missed := fs.String("missed", "", "missed fires: skip or run_once")
	timeout := fs.Duration("timeout", 0, "budget of each run (default: the agent's)")
	disabled := fs.Bool("disabled", false, "create the schedule disabled")
	enable := fs.Bool("enable", false, "update: enable the schedule")
	disable := fs.Bool("disable", false, "update: disable the schedule")
	limit := fs.Int("limit", 100, "list: at most `N` schedules (1 to 1000)")
	cursor := fs.String("cursor", "", "list: continue from `CURSOR`")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(pos) == 0 {
		return usageError("schedules", "want a subcommand")
	}
	verb, agent, id := pos[0], "", ""
	if len(pos) > 1 {
		agent = pos[1]
	}
	if len(pos) > 2 {
		id = pos[2]
	}
	if agent == "" && verb != "list" && verb != "ls" {
		return usageError("schedules", "%s needs an AGENT", verb)
	}
	sc := schedulesCmd{ctx: context.Background(), c: cf.client(), json: cf.json, agent: agent, id: id}
	if id == "" && (verb == "update" || verb == "set" || verb == "delete" || verb == "rm" || verb == "trigger" || verb == "run") {
		return usageError("schedules", "%s needs AGENT and ID", verb)
	}
	switch verb {
	case "list", "ls":
		return sc.list(*limit, *cursor)
	case "create", "add":
		return sc.create(&client.Schedule{Agent: agent, Cron: *cron, TimeZone: *tz, Input: *input, Enabled: !*disabled, Missed: corral.MissedPolicy(*missed), Timeout: corral.Duration(*timeout)})
	case "update", "set":
		patch := map[string]any{}
		for flagName, field := range map[string]string{"cron": "cron", "tz": "time_zone", "input": "input", "missed": "missed"} {
			if set[flagName] {
				patch[field] = fs.Lookup(flagName).Value.String()
			}
		}
		if set["timeout"] {
			patch["timeout"] = timeout.String()
		}
		if *enable && *disable {
			return usageError("schedules", "--enable and --disable together")
		}
		if *enable || *disable {
			patch["enabled"] = *enable
		}
		if len(patch) == 0 {
			return usageError("schedules", "update: no change given")
		}
		return sc.update(patch)
	case "delete", "rm":
		return sc.delete()
	case "trigger", "run":
		return sc.trigger()
	}
	return usageError("schedules", "unknown subcommand %q", verb)
}

// schedulesCmd runs one verb of corral schedules.
type schedulesCmd struct {
	ctx       context.Context
	c         *client.Client
	json      bool
	agent, id string
}

func (s schedulesCmd) show(sc *client.Schedule) {
	if s.json {
		printJSON(sc)
		return
	}
	next := "-"
	if sc.NextFireAt != nil {
		next = shortTime(sc.NextFireAt)
	}
	fmt.Printf("%s  %q %s  enabled=%v  next %s\n", sc.ID, sc.Cron, zone(sc.TimeZone), sc.Enabled, next)
}

func (s schedulesCmd) list(limit int, cursor string) int {
	list, next, err := s.c.Schedules(s.ctx, client.ScheduleListOptions{Agent: s.agent, Limit: limit, Cursor: cursor})
	if err != nil {
		return apiFail("schedules", err)
	}
	if s.json {
		printJSON(map[string]any{"schedules": list, "next_cursor": next})
		return exitOK
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCRON\tZONE\tENABLED\tMISSED\tNEXT\tLAST\tINPUT")
	for _, sc := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\t%s\t%s\t%s\n", sc.ID, sc.Agent, sc.Cron, zone(sc.TimeZone), sc.Enabled, sc.Missed, shortTime(sc.NextFireAt), shortTime(sc.LastFireAt), truncate(sc.Input, 30))
	}
	tw.Flush()
	if next != "" {
		fmt.Fprintln(os.Stderr, "more:", strings.Join(append([]string{"corral schedules list"}, strings.Fields(s.agent+" --cursor "+next)...), " "))
	}
	return exitOK
}

func (s schedulesCmd) create(sc *client.Schedule) int {
	got, err := s.c.CreateSchedule(s.ctx, sc)
	if err != nil {
		return apiFail("schedules", err)
	}
	s.show(got)
	return exitOK
}

func (s schedulesCmd) update(patch map[string]any) int {
	got, err := s.c.UpdateSchedule(s.ctx, s.agent, s.id, patch)
	if err != nil {
		return apiFail("schedules", err)
	}
	s.show(got)
	return exitOK
}

func (s schedulesCmd) delete() int {
	if err := s.c.DeleteSchedule(s.ctx, s.agent, s.id); err != nil {
		return apiFail("schedules", err)
	}
	if s.json {
		printJSON(map[string]string{"deleted": s.id})
	} else {
		fmt.Printf("deleted schedule %s\n", s.id)
	}
	return exitOK
}

func (s schedulesCmd) trigger() int {
	e, err := s.c.TriggerSchedule(s.ctx, s.agent, s.id)
	if err != nil {
		return apiFail("schedules", err)
	}
	if s.json {
		printJSON(e)
	} else {
		fmt.Println(e.ID)
	}
	return exitOK
}

func zone(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}
