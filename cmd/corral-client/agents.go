package main

import (
	"context"
	"errors"
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
	register("agents", agentsMain)
}

const agentsUsage = `Usage:
  corral agents [list]
  corral agents get NAME
  corral agents create NAME --kind shell [flags]
  corral agents create NAME --kind headless [flags] -- COMMAND [ARGS...]
  corral agents update NAME [flags] [-- COMMAND [ARGS...]]
  corral agents delete NAME
  corral agents slots NAME
  corral agents spend NAME

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

A run that fails for an error type --retry-on names (default: interrupted,
rate_limit, stream_error, stall, idle) is run again as its next attempt,
at most --max-attempts in all, after --retry-backoff (doubled each time,
jittered, at most --retry-max-backoff) or, for a rate limit, at the
provider's reset time; auth, quota, max_budget, permission_mode and
cancelled never are. --resume makes a headless agent's retry continue the
session of the attempt before (docs/service.md, "Retries and attempts").

Spend: --max-cost-usd and --max-tokens end a headless run whose spend
crosses them (max_budget), counted from its stream as it arrives;
--daily-cost-usd, --daily-tokens, --monthly-cost-usd and --monthly-tokens
bound all the agent's runs per day or month of --budget-tz, across the
fleet: once spent, new tasks are refused (429 until the window reopens) or
held in the queue, and runs in flight end at their next usage event
(--budget-overrun finish lets them finish). spend shows the windows.
` + clientEnvHelp + `
Flags:
`

// agentFlags are the flags of corral agents: one per corral.AgentFields()
// entry, and those of the settings with front ends of their own (env,
// sandbox).
type agentFlags struct {
	fs                 *flag.FlagSet
	hooks              *webhookFlags
	fields             map[string]*fieldFlag // by JSON key
	env, unsetEnv      stringList
	mode, network      string
	writable, denyRead stringList
	hosts, unixSocks   stringList
}

// fieldFlag is the flag of one agent field: its text, as typed (a list
// field's flag may repeat, and each value adds to the list).
type fieldFlag struct {
	f    *corral.AgentField
	vals []string
}

func (v *fieldFlag) String() string { return strings.Join(v.vals, ",") }

// IsBoolFlag lets a boolean field's flag stand alone (--resume).
func (v *fieldFlag) IsBoolFlag() bool { return v.f.Kind == corral.FieldBool }

func (v *fieldFlag) Set(s string) error {
	if v.f.Kind != corral.FieldList {
		v.vals = v.vals[:0]
	}
	v.vals = append(v.vals, s)
	return nil
}

// text is what the flag was given, the values of a list joined.
func (v *fieldFlag) text() string {
	return strings.Join(v.vals, ",")
}

func addAgentFlags(fs *flag.FlagSet) *agentFlags {
	af := &agentFlags{fs: fs, fields: map[string]*fieldFlag{}, hooks: addWebhookFlags(fs, "the agent's")}
	for i := range corral.AgentFields() {
		f := &corral.AgentFields()[i]
		v := &fieldFlag{f: f}
		af.fields[f.Key] = v
		help := f.Help
		if f.Kind == corral.FieldList {
			help += " (repeatable)"
		}
		fs.Var(v, f.Flag, help)
	}
	fs.Var(&af.env, "env", "`KEY=VALUE` in the agent's environment (repeatable; write-only: never shown again)")
	fs.Var(&af.unsetEnv, "unset-env", "update: remove the variable `KEY` from the agent's environment (repeatable)")
	fs.StringVar(&af.mode, "sandbox", "", "confine the agent's tasks: off, read-only or workspace (the workdir)")
	fs.StringVar(&af.network, "network", "", "with --sandbox, the network: none (only --allow-host) or host")
	fs.Var(&af.writable, "writable", "with --sandbox workspace, another absolute `PATH` tasks may write (repeatable)")
	fs.Var(&af.denyRead, "deny-read", "with --sandbox, an absolute `PATH` tasks may not read (repeatable)")
	fs.Var(&af.hosts, "allow-host", "with --sandbox, a `HOST[:PORT]` tasks may reach through corral's proxy (repeatable)")
	fs.Var(&af.unixSocks, "allow-unix-socket", "with --sandbox, a Unix socket `PATH` tasks may connect to (repeatable)")
	return af
}

// set reports which flags were given.
func (af *agentFlags) set() map[string]bool {
	set := map[string]bool{}
	af.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// sandbox returns the sandbox the flags describe, and whether any sandbox
// flag was given (update then replaces the agent's whole sandbox).
func (af *agentFlags) sandbox() (corral.Sandbox, bool, error) {
	set := af.set()
	var sb corral.Sandbox
	if !(set["sandbox"] || set["network"] || set["writable"] || set["deny-read"] || set["allow-host"] || set["allow-unix-socket"]) {
		return sb, false, nil
	}
	var err error
	if sb.Mode, err = corral.ParseSandboxMode(af.mode); err != nil {
		return sb, true, fmt.Errorf("--sandbox: %v", err)
	}
	if sb.Network, err = corral.ParseNetwork(af.network); err != nil {
		return sb, true, fmt.Errorf("--network: %v", err)
	}
	sb.Writable, sb.DenyRead, sb.AllowHosts, sb.AllowUnixSockets = af.writable, af.denyRead, af.hosts, af.unixSocks
	return sb, true, nil
}

// agent returns the agent named name that the flags describe, for create.
func (af *agentFlags) agent(name string, command []string) (*client.Agent, error) {
	if len(af.unsetEnv) > 0 {
		return nil, errors.New("--unset-env is for update")
	}
	a := &client.Agent{Name: name, Command: command}
	set := af.set()
	for _, v := range af.fields {
		if set[v.f.Flag] {
			if err := v.f.Set(a, v.text()); err != nil {
				return nil, fmt.Errorf("--%s: %v", v.f.Flag, err)
			}
		}
	}
	env, err := parseEnv(af.env)
	if err != nil {
		return nil, err
	}
	for k, v := range env {
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		a.Env[k] = v.(string)
	}
	if a.Webhooks, err = af.hooks.Hooks(); err != nil {
		return nil, err
	}
	sb, _, err := af.sandbox()
	a.Sandbox = sb
	return a, err
}

// patch returns the change the flags describe, for update: each field
// given, by its JSON key (null for its default).
func (af *agentFlags) patch(command []string) (map[string]any, error) {
	patch := map[string]any{}
	set := af.set()
	for key, v := range af.fields {
		if !set[v.f.Flag] {
			continue
		}
		var a corral.Agent
		if err := v.f.Set(&a, v.text()); err != nil {
			return nil, fmt.Errorf("--%s: %v", v.f.Flag, err)
		}
		patch[key] = v.f.JSON(&a)
	}
	if set["env"] || set["unset-env"] {
		// Merged name by name: the values already set stay unseen.
		m, err := parseEnv(af.env)
		if err != nil {
			return nil, err
		}
		for _, k := range af.unsetEnv {
			m[k] = nil
		}
		patch["env"] = m
	}
	sb, given, err := af.sandbox()
	if err != nil {
		return nil, err
	}
	if given {
		patch["sandbox"] = sb
	}
	if len(command) > 0 {
		patch["command"] = command
	}
	if set["webhook"] {
		hooks, err := af.hooks.Hooks()
		if err != nil {
			return nil, err
		}
		patch["webhooks"] = hooks // replaces the agent's webhooks
	}
	if len(patch) == 0 {
		return nil, errors.New("update: no change given")
	}
	return patch, nil
}

// parseEnv reads KEY=VALUE flags.
func parseEnv(list []string) (map[string]any, error) {
	m := map[string]any{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		m[k] = v
	}
	return m, nil
}

func agentsMain(args []string) int {
	fs := flag.NewFlagSet("agents", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), agentsUsage); fs.PrintDefaults() }
	cf := addClientFlags(fs)
	af := addAgentFlags(fs)
	pos, command, err := parseInterleaved(fs, args)
	if err != nil {
		return parseError(err)
	}
	verb := "list"
	if len(pos) > 0 {
		verb, pos = pos[0], pos[1:]
	}
	name := ""
	if len(pos) > 0 {
		name = pos[0]
	}
	a := agentsCmd{ctx: context.Background(), c: cf.client(), json: cf.json, name: name}
	if verb != "list" && verb != "ls" && name == "" {
		return usageError("agents", "%s needs a NAME", verb)
	}
	switch verb {
	case "list", "ls":
		return a.list()
	case "get", "show":
		return a.get()
	case "create", "add":
		ag, err := af.agent(name, command)
		if err != nil {
			return usageError("agents", "%v", err)
		}
		return a.create(ag)
	case "update", "set":
		patch, err := af.patch(command)
		if err != nil {
			return usageError("agents", "%v", err)
		}
		return a.update(patch)
	case "delete", "rm":
		return a.delete()
	case "slots":
		return a.slots()
	case "spend":
		return a.spend()
	}
	return usageError("agents", "unknown subcommand %q", verb)
}

// agentsCmd runs one verb of corral agents.
type agentsCmd struct {
	ctx  context.Context
	c    *client.Client
	json bool
	name string
}

func (a agentsCmd) list() int {
	list, err := a.c.Agents(a.ctx)
	if err != nil {
		return apiFail("agents", err)
	}
	if a.json {
		printJSON(list)
		return exitOK
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSLOTS\tOVERFLOW\tTIMEOUT\tRUN AS\tSANDBOX\tCOMMAND")
	for _, ag := range list {
		cmd := ag.Shell + " < INPUT"
		if ag.Kind == corral.KindHeadless {
			cmd = strings.Join(ag.Command, " ")
		}
		to := "-"
		if ag.Timeout > 0 {
			to = ag.Timeout.D().String()
		}
		user := ag.RunAs
		if user == "" {
			user = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", ag.Name, ag.Kind, ag.MaxParallelTasks, overflowText(ag), to, user, ag.Sandbox.Mode, truncate(cmd, 50))
	}
	tw.Flush()
	return exitOK
}

func (a agentsCmd) get() int {
	ag, err := a.c.Agent(a.ctx, a.name)
	if err != nil {
		return apiFail("agents", err)
	}
	printJSON(ag)
	return exitOK
}

func (a agentsCmd) create(ag *client.Agent) int {
	got, err := a.c.CreateAgent(a.ctx, ag)
	if err != nil {
		return apiFail("agents", err)
	}
	if a.json {
		printJSON(got)
	} else {
		fmt.Printf("created agent %s (%s, %d slots, overflow %s)\n", got.Name, got.Kind, got.MaxParallelTasks, overflowText(got))
	}
	return exitOK
}

func (a agentsCmd) update(patch map[string]any) int {
	got, err := a.c.UpdateAgent(a.ctx, a.name, patch)
	if err != nil {
		return apiFail("agents", err)
	}
	if a.json {
		printJSON(got)
	} else {
		fmt.Printf("updated agent %s\n", got.Name)
	}
	return exitOK
}

func (a agentsCmd) delete() int {
	if err := a.c.DeleteAgent(a.ctx, a.name); err != nil {
		return apiFail("agents", err)
	}
	if a.json {
		printJSON(map[string]string{"deleted": a.name})
	} else {
		fmt.Printf("deleted agent %s\n", a.name)
	}
	return exitOK
}

func (a agentsCmd) spend() int {
	ws, err := a.c.Spend(a.ctx, a.name)
	if err != nil {
		return apiFail("agents", err)
	}
	if a.json {
		printJSON(map[string]any{"agent": a.name, "windows": ws})
		return exitOK
	}
	if len(ws) == 0 {
		fmt.Printf("%s: no daily or monthly budget\n", a.name)
		return exitOK
	}
	for _, w := range ws {
		line := fmt.Sprintf("%s %-7s $%.4f", a.name, w.Kind, w.CostUSD)
		if w.CostLimit > 0 {
			line += fmt.Sprintf(" of $%.2f", w.CostLimit)
		}
		line += fmt.Sprintf(", %d tokens", w.Tokens)
		if w.TokenLimit > 0 {
			line += fmt.Sprintf(" of %d", w.TokenLimit)
		}
		line += fmt.Sprintf(" (%.0f%% used; resets %s)", 100*w.Used(), w.End.Format(time.RFC3339))
		fmt.Println(line)
	}
	return exitOK
}

func (a agentsCmd) slots() int {
	capacity, slots, err := a.c.Slots(a.ctx, a.name)
	if err != nil {
		return apiFail("agents", err)
	}
	if a.json {
		printJSON(map[string]any{"agent": a.name, "capacity": capacity, "used": len(slots), "slots": slots})
		return exitOK
	}
	fmt.Printf("%s: %d/%d slots used\n", a.name, len(slots), capacity)
	for _, s := range slots {
		fmt.Printf("  slot %d  %s  since %s\n", s.No, s.ExecutionID, shortTime(&s.Since))
	}
	return exitOK
}

func overflowText(a *client.Agent) string {
	if a.Overflow == corral.OverflowQueue {
		return fmt.Sprintf("queue(%d)", a.MaxBacklog)
	}
	return string(a.Overflow)
}
