package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/store"
)

func init() {
	register("agents", "list, create, change and delete agents of the task service", agentsMain)
}

const agentsUsage = `Usage:
  corral agents [list]
  corral agents get NAME
  corral agents create NAME --kind shell [flags]
  corral agents create NAME --kind headless [flags] -- COMMAND [ARGS...]
  corral agents update NAME [flags] [-- COMMAND [ARGS...]]
  corral agents delete NAME
  corral agents slots NAME

An agent runs tasks. A shell agent runs each task's input as a command line
with its shell (bash -c INPUT). A headless agent runs its command template
with the task's input (the prompt) in place of {{prompt}} (or appended), e.g.

  corral agents create coder --kind headless --timeout 30m --idle 5m -- \
    claude -p --output-format stream-json --verbose '{{prompt}}'

At most --max-parallel tasks of an agent run at once, across every worker of
the fleet; others are rejected (--overflow reject, HTTP 429) or queued in
order (--overflow queue, at most --max-backlog waiting). An agent with
--labels runs only on workers started with all of them (corral serve
--labels). update changes only the flags given.
` + clientEnvHelp + `
Flags:
`

func agentsMain(args []string) int {
	fs := flag.NewFlagSet("agents", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), agentsUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	kind := fs.String("kind", "", "`KIND` of agent: shell or headless")
	shell := fs.String("shell", "", "shell of a shell agent (default bash)")
	workdir := fs.String("workdir", "", "working `DIR` of the agent's runs")
	maxPar := fs.Int("max-parallel", 0, "`N` tasks at most at once (default 3)")
	overflow := fs.String("overflow", "", "when at capacity: reject (default) or queue")
	backlog := fs.Int("max-backlog", 0, "`N` queued tasks at most (default 50)")
	timeout := fs.Duration("timeout", 0, "budget of one run (0: none)")
	stall := fs.Duration("stall", 0, "headless: stop a turn whose tool call stays open this long")
	idle := fs.Duration("idle", 0, "headless: stop a turn silent this long")
	grace := fs.Duration("grace", 0, "time between the stop signal and SIGKILL (default 2s)")
	maxOut := fs.Int("max-output", 0, "`BYTES` of each stream kept in the record (default 64 KiB; the log keeps all)")
	labels := fs.String("labels", "", "comma-separated `LABELS`: run only on workers started with all of them (corral serve --labels)")
	var env stringList
	fs.Var(&env, "env", "`KEY=VALUE` in the agent's environment (repeatable)")
	pos, command, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	verb := "list"
	if len(pos) > 0 {
		verb, pos = pos[0], pos[1:]
	}
	ctx := context.Background()
	c := cf.client()
	needName := func() (string, bool) {
		if len(pos) == 0 {
			return "", false
		}
		return pos[0], true
	}
	switch verb {
	case "list", "ls":
		list, err := c.Agents(ctx)
		if err != nil {
			return apiFail("agents", err)
		}
		if cf.json {
			printJSON(list)
			return exitOK
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tSLOTS\tOVERFLOW\tTIMEOUT\tCOMMAND")
		for _, a := range list {
			cmd := a.Shell + " -c INPUT"
			if a.Kind == store.KindHeadless {
				cmd = strings.Join(a.Command, " ")
			}
			to := "-"
			if a.Timeout > 0 {
				to = a.Timeout.D().String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", a.Name, a.Kind, a.MaxParallelTasks, overflowText(a), to, truncate(cmd, 50))
		}
		tw.Flush()
		return exitOK
	case "get", "show":
		name, ok := needName()
		if !ok {
			return usageError("agents", "get needs a NAME")
		}
		a, err := c.Agent(ctx, name)
		if err != nil {
			return apiFail("agents", err)
		}
		printJSON(a)
		return exitOK
	case "create", "add":
		name, ok := needName()
		if !ok {
			return usageError("agents", "create needs a NAME")
		}
		a := &client.Agent{Name: name, Kind: store.AgentKind(*kind), Shell: *shell, Workdir: *workdir, MaxParallelTasks: *maxPar,
			Overflow: store.Overflow(*overflow), MaxBacklog: *backlog, Timeout: store.Duration(*timeout), StallTimeout: store.Duration(*stall),
			IdleTimeout: store.Duration(*idle), Grace: store.Duration(*grace), MaxOutput: *maxOut, Command: command,
			Labels: splitLabels(*labels)}
		if len(env) > 0 {
			a.Env = map[string]string{}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usageError("agents", "--env %q: want KEY=VALUE", kv)
				}
				a.Env[k] = v
			}
		}
		got, err := c.CreateAgent(ctx, a)
		if err != nil {
			return apiFail("agents", err)
		}
		if cf.json {
			printJSON(got)
		} else {
			fmt.Printf("created agent %s (%s, %d slots, overflow %s)\n", got.Name, got.Kind, got.MaxParallelTasks, overflowText(got))
		}
		return exitOK
	case "update", "set":
		name, ok := needName()
		if !ok {
			return usageError("agents", "update needs a NAME")
		}
		patch := map[string]any{}
		for flagName, field := range map[string]string{"kind": "kind", "shell": "shell", "workdir": "workdir", "max-parallel": "max_parallel_tasks",
			"overflow": "overflow", "max-backlog": "max_backlog", "timeout": "timeout", "stall": "stall_timeout", "idle": "idle_timeout", "grace": "grace", "max-output": "max_output"} {
			if set[flagName] {
				v := fs.Lookup(flagName).Value.(flag.Getter).Get()
				if d, ok := v.(time.Duration); ok {
					v = d.String()
				}
				patch[field] = v
			}
		}
		if set["labels"] {
			patch["labels"] = splitLabels(*labels)
		}
		if set["env"] {
			m := map[string]string{}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				m[k] = v
			}
			patch["env"] = m
		}
		if len(command) > 0 {
			patch["command"] = command
		}
		if len(patch) == 0 {
			return usageError("agents", "update: no change given")
		}
		got, err := c.UpdateAgent(ctx, name, patch)
		if err != nil {
			return apiFail("agents", err)
		}
		if cf.json {
			printJSON(got)
		} else {
			fmt.Printf("updated agent %s\n", got.Name)
		}
		return exitOK
	case "delete", "rm":
		name, ok := needName()
		if !ok {
			return usageError("agents", "delete needs a NAME")
		}
		if err := c.DeleteAgent(ctx, name); err != nil {
			return apiFail("agents", err)
		}
		if cf.json {
			printJSON(map[string]string{"deleted": name})
		} else {
			fmt.Printf("deleted agent %s\n", name)
		}
		return exitOK
	case "slots":
		name, ok := needName()
		if !ok {
			return usageError("agents", "slots needs a NAME")
		}
		capacity, slots, err := c.Slots(ctx, name)
		if err != nil {
			return apiFail("agents", err)
		}
		if cf.json {
			printJSON(map[string]any{"agent": name, "capacity": capacity, "used": len(slots), "slots": slots})
			return exitOK
		}
		fmt.Printf("%s: %d/%d slots used\n", name, len(slots), capacity)
		for _, s := range slots {
			fmt.Printf("  slot %d  %s  since %s\n", s.No, s.ExecutionID, shortTime(&s.Since))
		}
		return exitOK
	}
	return usageError("agents", "unknown subcommand %q", verb)
}

// splitLabels splits "a, b" into its labels; the service validates them.
func splitLabels(s string) []string {
	labels := []string{}
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			labels = append(labels, l)
		}
	}
	return labels
}

func overflowText(a *client.Agent) string {
	if a.Overflow == store.OverflowQueue {
		return fmt.Sprintf("queue(%d)", a.MaxBacklog)
	}
	return string(a.Overflow)
}
