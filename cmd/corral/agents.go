package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
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

An agent runs tasks. A shell agent runs each task's input as a script of
its shell (bash by default; the input reaches it on a pipe, never in its
arguments). A headless agent runs its command template with the task's
input (the prompt) in place of {{prompt}}, e.g.

  corral agents create coder --kind headless --timeout 30m --idle 5m \
    --env ANTHROPIC_API_KEY=sk-ant-... -- \
    claude -p --output-format stream-json --verbose -- '{{prompt}}'

The "--" before '{{prompt}}' ends the agent's own options, so that a prompt
starting with "-" (say, --dangerously-skip-permissions) is never read as
one; the service refuses a template whose prompt would land where options
are parsed. Without {{prompt}}, the prompt is appended after a "--".

Tasks see only a minimal environment (PATH, HOME, USER, LANG, TZ), the
variables --pass-env names (taken from the service's own environment; its
token and database URL never are), and --env. The values of --env are
write-only: get and list show only their names (env_names); update --env
replaces one, --unset-env removes one. --run-as USER runs the tasks as that
user (the service must be able to switch to it). --sandbox read-only or
workspace confines them (docs/sandbox.md); the sandbox flags of update
replace the agent's whole sandbox.

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
	var env, unsetEnv, passEnv stringList
	fs.Var(&env, "env", "`KEY=VALUE` in the agent's environment (repeatable; write-only: never shown again)")
	fs.Var(&unsetEnv, "unset-env", "update: remove the variable `KEY` from the agent's environment (repeatable)")
	fs.Var(&passEnv, "pass-env", "pass the service's variable `NAME` on to the agent's tasks (repeatable)")
	runAs := fs.String("run-as", "", "run the agent's tasks as `USER` (default: the service's --run-as, else its own user)")
	sbMode := fs.String("sandbox", "", "confine the agent's tasks: off, read-only or workspace (the workdir)")
	network := fs.String("network", "", "with --sandbox, the network: none (only --allow-host) or host")
	var writable, denyRead, allowHosts, allowSocks stringList
	fs.Var(&writable, "writable", "with --sandbox workspace, another absolute `PATH` tasks may write (repeatable)")
	fs.Var(&denyRead, "deny-read", "with --sandbox, an absolute `PATH` tasks may not read (repeatable)")
	fs.Var(&allowHosts, "allow-host", "with --sandbox, a `HOST[:PORT]` tasks may reach through corral's proxy (repeatable)")
	fs.Var(&allowSocks, "allow-unix-socket", "with --sandbox, a Unix socket `PATH` tasks may connect to (repeatable)")
	pos, command, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	sandboxSet := set["sandbox"] || set["network"] || set["writable"] || set["deny-read"] || set["allow-host"] || set["allow-unix-socket"]
	var sandbox corral.Sandbox
	if sandboxSet {
		if sandbox.Mode, err = corral.ParseSandboxMode(*sbMode); err != nil {
			return usageError("agents", "--sandbox: %v", err)
		}
		if sandbox.Network, err = corral.ParseNetwork(*network); err != nil {
			return usageError("agents", "--network: %v", err)
		}
		sandbox.Writable, sandbox.DenyRead, sandbox.AllowHosts, sandbox.AllowUnixSockets = writable, denyRead, allowHosts, allowSocks
	}
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
		fmt.Fprintln(tw, "NAME\tKIND\tSLOTS\tOVERFLOW\tTIMEOUT\tRUN AS\tSANDBOX\tCOMMAND")
		for _, a := range list {
			cmd := a.Shell + " < INPUT"
			if a.Kind == corral.KindHeadless {
				cmd = strings.Join(a.Command, " ")
			}
			to := "-"
			if a.Timeout > 0 {
				to = a.Timeout.D().String()
			}
			user := a.RunAs
			if user == "" {
				user = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Kind, a.MaxParallelTasks, overflowText(a), to, user, a.Sandbox.Mode, truncate(cmd, 50))
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
		a := &client.Agent{Name: name, Kind: corral.AgentKind(*kind), Shell: *shell, Workdir: *workdir, MaxParallelTasks: *maxPar,
			Overflow: corral.Overflow(*overflow), MaxBacklog: *backlog, Timeout: corral.Duration(*timeout), StallTimeout: corral.Duration(*stall),
			IdleTimeout: corral.Duration(*idle), Grace: corral.Duration(*grace), MaxOutput: *maxOut, Command: command,
			Labels: splitLabels(*labels), RunAs: *runAs, PassEnv: nonEmpty(passEnv), Sandbox: sandbox}
		if len(unsetEnv) > 0 {
			return usageError("agents", "--unset-env is for update")
		}
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
		if set["env"] || set["unset-env"] {
			// Merged name by name: the values already set stay unseen.
			m := map[string]any{}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usageError("agents", "--env %q: want KEY=VALUE", kv)
				}
				m[k] = v
			}
			for _, k := range unsetEnv {
				m[k] = nil
			}
			patch["env"] = m
		}
		if set["run-as"] {
			patch["run_as"] = *runAs
		}
		if set["pass-env"] {
			patch["pass_env"] = nonEmpty(passEnv) // --pass-env '' clears the list
		}
		if sandboxSet {
			patch["sandbox"] = sandbox
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
	if a.Overflow == corral.OverflowQueue {
		return fmt.Sprintf("queue(%d)", a.MaxBacklog)
	}
	return string(a.Overflow)
}

// nonEmpty returns the non-empty strings of list, never nil.
func nonEmpty(list []string) []string {
	out := []string{}
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
