package corral

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FieldKind says how an agent setting is written as text.
type FieldKind int

const (
	FieldText     FieldKind = iota // a string, as it is
	FieldInt                       // a whole number; empty means 0, the default
	FieldDuration                  // a duration ("90s", "1h30m") or seconds; empty means 0
	FieldList                      // names separated by commas, spaces or new lines
	FieldBool                      // true or false ("on", "yes", "1"; empty is false)
	FieldNumber                    // a decimal number; empty means 0, none
)

// An AgentField is one setting of an agent as every front end offers it:
// the key of the API's JSON (and of the web form's input), the flag of
// `corral agents`, how its value reads and writes as text, and the words
// that explain it. AgentFields() lists them; a new setting is declared once
// there and appears in the CLI, the web form and the API together.
//
// The name, the command template, the environment (write-only) and the
// sandbox have front ends of their own and are not listed.
type AgentField struct {
	Key   string // the JSON key and form field, as "max_parallel_tasks"
	Flag  string // the flag of corral agents, as "max-parallel"
	Kind  FieldKind
	Label string // a short label, for forms
	Help  string // one line, for flag help and form hints
	// Min and Max bound a FieldInt; zero Max means no bound.
	Min, Max int64
	get      func(a *Agent) string
	set      func(a *Agent, v string) error
}

// Text returns the field's value in a as text, "" for the zero value.
func (f *AgentField) Text(a *Agent) string { return f.get(a) }

// Set parses v as the field's value and sets it in a. The error says, in
// words a person can act on, what v should be.
func (f *AgentField) Set(a *Agent, v string) error {
	if err := f.set(a, strings.TrimSpace(v)); err != nil {
		return fmt.Errorf("%s: %w", f.Key, err)
	}
	return nil
}

// JSON returns the field's value in a as the API's JSON carries it (null
// for the zero value, which a patch reads as "the default").
func (f *AgentField) JSON(a *Agent) json.RawMessage {
	b, _ := json.Marshal(a)
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	if v, ok := m[f.Key]; ok {
		return v
	}
	return json.RawMessage("null")
}

// AgentFieldByKey returns the field of AgentFields() with that JSON key, or
// nil.
func AgentFieldByKey(key string) *AgentField {
	for i := range AgentFields() {
		if AgentFields()[i].Key == key {
			return &AgentFields()[i]
		}
	}
	return nil
}

// AgentFields returns the settings of an agent that every front end offers
// the same way (see AgentField), in the order they offer them: the same
// slice at every call, made at the first (not at package initialisation,
// which every program that links this package pays at start, whether it
// shows an agent or not). It must not be modified.
func AgentFields() []AgentField { return agentFields() }

var agentFields = sync.OnceValue(func() []AgentField {
	return []AgentField{
		textField("kind", "kind", "Kind", "`KIND` of agent: shell or headless", func(a *Agent) *string { return (*string)(&a.Kind) }),
		textField("shell", "shell", "Shell", "shell of a shell agent (default bash)", func(a *Agent) *string { return &a.Shell }),
		textField("workdir", "workdir", "Working directory", "working `DIR` of the agent's runs", func(a *Agent) *string { return &a.Workdir }),
		intField("max_parallel_tasks", "max-parallel", "Parallel tasks", "`N` tasks at most at once, across the fleet (default 3)", 1, 10000, func(a *Agent) *int { return &a.MaxParallelTasks }),
		textField("overflow", "overflow", "When all slots are taken", "when at capacity: reject (default) or queue", func(a *Agent) *string { return (*string)(&a.Overflow) }),
		intField("max_backlog", "max-backlog", "Queue length", "`N` queued tasks at most (default 50)", 1, 1000000, func(a *Agent) *int { return &a.MaxBacklog }),
		durField("timeout", "timeout", "Budget per run", "budget of one run (0: none)", func(a *Agent) *Duration { return &a.Timeout }),
		graceField(),
		durField("stall_timeout", "stall", "Stall limit of MCP tool calls", "headless: stop a turn whose tool call stays open this long (default 30m)", func(a *Agent) *Duration { return &a.StallTimeout }),
		durField("idle_timeout", "idle", "Idle limit", "headless: stop a turn silent this long (default 10m)", func(a *Agent) *Duration { return &a.IdleTimeout }),
		intField("max_output", "max-output", "Output kept per stream (bytes)", "`BYTES` of each stream kept in the record (default 64 KiB; the log keeps all)", 1, MaxOutputLimit, func(a *Agent) *int { return &a.MaxOutput }),
		listField("labels", "labels", "Labels", "comma-separated `LABELS`: run only on workers started with all of them (corral serve --labels)", func(a *Agent) *[]string { return &a.Labels }),
		textField("run_as", "run-as", "Run as", "run the agent's tasks as `USER` (default: the service's --run-as, else its own user)", func(a *Agent) *string { return &a.RunAs }),
		listField("pass_env", "pass-env", "Variables passed on", "pass the service's variables `NAMES` (comma-separated) on to the agent's tasks", func(a *Agent) *[]string { return &a.PassEnv }),
		intField("max_attempts", "max-attempts", "Attempts per run", "`N` attempts at most per run, the first included (default 1: no retry)", 1, MaxAttemptsLimit, func(a *Agent) *int { return &a.MaxAttempts }),
		errorTypesField("retry_on", "retry-on", "Retried on", "comma-separated error `TYPES` a run is retried for (default interrupted, rate_limit, stream_error, stall, idle; never auth, quota, max_budget, permission_mode, cancelled)", func(a *Agent) *[]ErrorType { return &a.RetryOn }),
		durField("retry_backoff", "retry-backoff", "First retry after", "wait before the first retry, doubled for each one after, jittered (default 10s)", func(a *Agent) *Duration { return &a.RetryBackoff }),
		durField("retry_max_backoff", "retry-max-backoff", "Longest wait between attempts", "the longest wait between two attempts (default 10m); a rate limit's reset time is waited for whatever it is", func(a *Agent) *Duration { return &a.RetryMaxBackoff }),
		boolField("resume", "resume", "Resume the session on retry", "headless: a retry continues the session of the attempt before (claude --resume, codex exec resume), on any worker", func(a *Agent) *bool { return &a.Resume }),
		numberField("max_cost_usd", "max-cost-usd", "Cost ceiling per run (USD)", "end a headless run whose cost crosses `USD` (0: none)", func(a *Agent) *float64 { return &a.MaxCostUSD }),
		int64Field("max_tokens", "max-tokens", "Token ceiling per run", "end a headless run whose tokens cross `N` (0: none)", func(a *Agent) *int64 { return &a.MaxTokens }),
		numberField("daily_cost_usd", "daily-cost-usd", "Daily cost budget (USD)", "what all the agent's runs may spend in a day of --budget-tz (0: no bound)", func(a *Agent) *float64 { return &a.DailyCostUSD }),
		int64Field("daily_tokens", "daily-tokens", "Daily token budget", "the tokens all the agent's runs may use in a day (0: no bound)", func(a *Agent) *int64 { return &a.DailyTokens }),
		numberField("monthly_cost_usd", "monthly-cost-usd", "Monthly cost budget (USD)", "what all the agent's runs may spend in a calendar month (0: no bound)", func(a *Agent) *float64 { return &a.MonthlyCostUSD }),
		int64Field("monthly_tokens", "monthly-tokens", "Monthly token budget", "the tokens all the agent's runs may use in a month (0: no bound)", func(a *Agent) *int64 { return &a.MonthlyTokens }),
		textField("budget_time_zone", "budget-tz", "Budget time zone", "the IANA `ZONE` the budget's days and months are counted in (default UTC)", func(a *Agent) *string { return &a.BudgetTimeZone }),
		textField("budget_overrun", "budget-overrun", "When a budget runs out mid-run", "stop (the default: a run in flight ends at its next usage event) or finish", func(a *Agent) *string { return &a.BudgetOverrun }),
		textField("resume_prompt", "resume-prompt", "Prompt that resumes", "the `PROMPT` a resumed attempt is given (default: \"Continue from where you left off.\")", func(a *Agent) *string { return &a.ResumePrompt }),
	}
})

func textField(key, flag, label, help string, p func(*Agent) *string) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldText, Label: label, Help: help,
		get: func(a *Agent) string { return *p(a) },
		set: func(a *Agent, v string) error { *p(a) = v; return nil }}
}

func intField(key, flag, label, help string, lo, hi int64, p func(*Agent) *int) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldInt, Label: label, Help: help, Min: lo, Max: hi,
		get: func(a *Agent) string {
			if *p(a) == 0 {
				return ""
			}
			return strconv.Itoa(*p(a))
		},
		set: func(a *Agent, v string) error {
			if v == "" {
				*p(a) = 0
				return nil
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < lo || hi > 0 && n > hi {
				return fmt.Errorf("want a whole number from %d to %d, or nothing for the default", lo, hi)
			}
			*p(a) = int(n)
			return nil
		}}
}

func durField(key, flag, label, help string, p func(*Agent) *Duration) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldDuration, Label: label, Help: help,
		get: func(a *Agent) string {
			if *p(a) == 0 {
				return ""
			}
			return time.Duration(*p(a)).String()
		},
		set: func(a *Agent, v string) error {
			d, err := ParseDuration(v)
			if err != nil {
				return fmt.Errorf("want a duration such as 90s, 15m or 1h30m, or nothing for the default")
			}
			if d < 0 {
				return fmt.Errorf("a duration cannot be negative")
			}
			*p(a) = d
			return nil
		}}
}

func listField(key, flag, label, help string, p func(*Agent) *[]string) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldList, Label: label, Help: help,
		get: func(a *Agent) string { return strings.Join(*p(a), ", ") },
		set: func(a *Agent, v string) error {
			*p(a) = splitList(v)
			if len(*p(a)) == 0 {
				*p(a) = []string{}
			}
			return nil
		}}
}

// graceField is the agent's grace, written as every front end of corral
// writes a grace: empty for the default (2 s), 0 for none (SIGKILL at
// once, kept as a negative grace), else a duration.
func graceField() AgentField {
	f := durField("grace", "grace", "Grace before SIGKILL", "time between the stop signal and SIGKILL (default 2s; 0: SIGKILL at once)", func(a *Agent) *Duration { return &a.Grace })
	get, set := f.get, f.set
	f.get = func(a *Agent) string {
		if a.Grace < 0 {
			return "0"
		}
		return get(a)
	}
	f.set = func(a *Agent, v string) error {
		if err := set(a, v); err != nil {
			return err
		}
		if v != "" && a.Grace == 0 {
			a.Grace = -1
		}
		return nil
	}
	return f
}

func boolField(key, flag, label, help string, p func(*Agent) *bool) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldBool, Label: label, Help: help,
		get: func(a *Agent) string {
			if *p(a) {
				return "true"
			}
			return ""
		},
		set: func(a *Agent, v string) error {
			switch strings.ToLower(v) {
			case "true", "on", "yes", "1":
				*p(a) = true
			case "", "false", "off", "no", "0":
				*p(a) = false
			default:
				return fmt.Errorf("want true or false")
			}
			return nil
		}}
}

func errorTypesField(key, flag, label, help string, p func(*Agent) *[]ErrorType) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldList, Label: label, Help: help,
		get: func(a *Agent) string {
			names := make([]string, len(*p(a)))
			for i, t := range *p(a) {
				names[i] = string(t)
			}
			return strings.Join(names, ", ")
		},
		set: func(a *Agent, v string) error {
			*p(a) = []ErrorType{}
			for _, n := range splitList(v) {
				*p(a) = append(*p(a), ErrorType(n))
			}
			return nil
		}}
}

// splitList splits a list typed as text: names separated by commas,
// spaces or new lines.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
}

func numberField(key, flag, label, help string, p func(*Agent) *float64) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldNumber, Label: label, Help: help,
		get: func(a *Agent) string {
			if *p(a) == 0 {
				return ""
			}
			return strconv.FormatFloat(*p(a), 'f', -1, 64)
		},
		set: func(a *Agent, v string) error {
			if v == "" {
				*p(a) = 0
				return nil
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
				return fmt.Errorf("want a number, 0 or more, or nothing for none")
			}
			*p(a) = n
			return nil
		}}
}

func int64Field(key, flag, label, help string, p func(*Agent) *int64) AgentField {
	return AgentField{Key: key, Flag: flag, Kind: FieldInt, Label: label, Help: help, Min: 0,
		get: func(a *Agent) string {
			if *p(a) == 0 {
				return ""
			}
			return strconv.FormatInt(*p(a), 10)
		},
		set: func(a *Agent, v string) error {
			if v == "" {
				*p(a) = 0
				return nil
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("want a whole number, 0 or more, or nothing for none")
			}
			*p(a) = n
			return nil
		}}
}
