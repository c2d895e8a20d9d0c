package shell

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/corralrun/corral/shell/internal/cmdsplit"
)

// Policy decides which commands may run. It is a guardrail, not a sandbox:
// patterns see the text of a command, and a command can always reach what a
// pattern forbids in ways the text does not show (eval, a script, an
// interpreter, a variable). Use it to catch mistakes and keep an honest
// agent on task; contain untrusted code with users, containers or virtual
// machines. The zero value allows everything.
//
// A command is judged line by line and segment by segment: every line of
// it, and every simple command in it (after ;, &&, ||, | and &, inside
// $(...), backquotes, subshells, and the bodies of if, while, for, case
// and functions), with and without leading VAR=value assignments. So
// "ls\nrm -rf /" does not pass an allowlist of "^ls".
type Policy struct {
	// Deny holds regular expressions (Go syntax). A command is denied if
	// one of them matches any of its lines or segments.
	Deny []string

	// Allow holds regular expressions. When it is not empty, every
	// segment of a command must match one of them, or the command is
	// denied. Anchor them: "^ls( |$)" allows ls, "ls" allows any segment
	// containing it.
	Allow []string

	// Func, if set, is called for commands the patterns let through, and
	// may deny them.
	Func func(c Check) (deny bool, reason string)
}

// Check is what a policy function and the approval hook see of a command.
type Check struct {
	// Command is the whole command line as asked.
	Command string
	// Lines are its non-empty lines, trimmed.
	Lines []string
	// Segments are its simple commands.
	Segments []Segment
	// Dir is the directory it would run in.
	Dir string
	// Session names the session it would run in; empty for one-shot runs.
	Session string
	// Background reports a request to start a background job.
	Background bool
}

// Segment is one simple command of a command line.
type Segment struct {
	// Text is the segment's source, with leading assignments.
	Text string
	// Words is the segment without leading VAR=value assignments.
	Words string
	// Line is the line of the command line it starts on, from 1.
	Line int
}

type compiledPolicy struct {
	deny, allow []*regexp.Regexp
	fn          func(Check) (bool, string)
}

func compilePolicy(p Policy) (*compiledPolicy, error) {
	c := &compiledPolicy{fn: p.Func}
	for _, s := range p.Deny {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("shell: policy deny pattern %q: %w (patterns are Go regular expressions)", s, err)
		}
		c.deny = append(c.deny, re)
	}
	for _, s := range p.Allow {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("shell: policy allow pattern %q: %w (patterns are Go regular expressions)", s, err)
		}
		c.allow = append(c.allow, re)
	}
	return c, nil
}

func (c *compiledPolicy) empty() bool {
	return len(c.deny) == 0 && len(c.allow) == 0 && c.fn == nil
}

// judge returns a denial reason, or "" to allow.
func (c *compiledPolicy) judge(ch Check) string {
	for _, re := range c.deny {
		for _, l := range ch.Lines {
			if re.MatchString(l) {
				return fmt.Sprintf("line %q matches the deny pattern %q", l, re)
			}
		}
		for _, s := range ch.Segments {
			if re.MatchString(s.Text) || re.MatchString(s.Words) {
				return fmt.Sprintf("command %q (line %d) matches the deny pattern %q", s.Words, s.Line, re)
			}
		}
	}
	if len(c.allow) > 0 {
		if len(ch.Segments) == 0 && strings.TrimSpace(ch.Command) != "" {
			return "the command has no simple command an allow pattern could match"
		}
		for _, s := range ch.Segments {
			if !matchAny(c.allow, s.Words) && !matchAny(c.allow, s.Text) {
				return fmt.Sprintf("command %q (line %d) matches no allow pattern (allowed: %s)", s.Words, s.Line, patternList(c.allow))
			}
		}
	}
	if c.fn != nil {
		if deny, why := c.fn(ch); deny {
			if why == "" {
				why = "refused by the policy function"
			}
			return why
		}
	}
	return ""
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func patternList(res []*regexp.Regexp) string {
	var s []string
	for _, re := range res {
		s = append(s, fmt.Sprintf("%q", re))
	}
	return strings.Join(s, ", ")
}

// newCheck splits a command for judging.
func newCheck(command, dir, session string, background bool) Check {
	segs, lines, _ := cmdsplit.Split(command)
	ch := Check{Command: command, Lines: lines, Dir: dir, Session: session, Background: background}
	for _, s := range segs {
		ch.Segments = append(ch.Segments, Segment(s))
	}
	return ch
}

// check applies the policy and the approval hook. It returns nil to let the
// command run, or the result of a denial (already audited).
func (t *Tool) check(ctx context.Context, command, dir, session, event string) *Result {
	if strings.TrimSpace(command) == "" {
		return &Result{ExitCode: -1, Denied: true, Reason: "empty command: give a shell command line to run"}
	}
	if t.policy.empty() && t.Approve == nil {
		return nil
	}
	ch := newCheck(command, dir, session, event == "job_start")
	reason := t.policy.judge(ch)
	by := "policy"
	if reason == "" && t.Approve != nil {
		if ok, why := t.Approve(ctx, ch); !ok {
			by = "approval"
			reason = why
			if reason == "" {
				reason = "not approved"
			}
		}
	}
	if reason == "" {
		return nil
	}
	res := &Result{ExitCode: -1, Denied: true, Reason: fmt.Sprintf("denied by %s: %s. The command did not run.", by, reason)}
	t.audit(AuditRecord{Event: "denied", Session: session, Command: command, Dir: dir, Decision: "deny", Reason: res.Reason}, t.Env)
	return res
}
