package shell

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral/proc"
)

// Result is how a command ended, shaped for a model and for JSON (field
// names in snake_case). Stdout and Stderr hold at most the character budget
// between them, head and tail; when they were cut, Truncated is set and
// FullOutputPath names a file with everything the command printed.
type Result struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`

	// ExitCode is the shell's exit status; -1 when a signal ended it or
	// the command did not run (Denied).
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the shell ("SIGKILL"), if any.
	Signal string `json:"signal,omitempty"`

	// TimedOut reports that the timeout fired; what was printed before
	// it is in Stdout and Stderr.
	TimedOut bool `json:"timed_out"`
	// Cancelled reports that the caller's context ended the command.
	Cancelled bool `json:"cancelled,omitempty"`

	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"full_output_path,omitempty"`
	StdoutBytes    int64  `json:"stdout_bytes"`
	StderrBytes    int64  `json:"stderr_bytes"`

	DurationMS int64 `json:"duration_ms"`

	// Denied reports that the policy or the approval hook refused the
	// command, which did not run; Reason says why.
	Denied bool   `json:"denied,omitempty"`
	Reason string `json:"reason,omitempty"`

	// SessionRestarted reports, in a session, that the command's shell
	// ended without saving its state (killed, crashed, or replaced by
	// exec): the session goes on from the state before this command.
	SessionRestarted bool `json:"session_restarted,omitempty"`
	// Cwd is the session's working directory after the command.
	Cwd string `json:"cwd,omitempty"`
	// Notes are short facts the model should know, such as background
	// processes killed when the command ended.
	Notes []string `json:"notes,omitempty"`

	// WaitedMS is how long the command waited for the session's previous
	// command before it started; the wait counts against its timeout.
	WaitedMS int64 `json:"waited_ms,omitempty"`

	// JobID names the background job a Start created.
	JobID string `json:"job_id,omitempty"`

	// Containment, Killed and Survivors come from the supervision core:
	// the tier that held the process tree, how many processes were
	// signalled to end, and how many outlived SIGKILL (zero unless stuck
	// in the kernel).
	Containment string `json:"containment,omitempty"`
	Killed      int    `json:"killed"`
	Survivors   int    `json:"survivors"`

	// Proc is the supervision core's full account; nil for a denied
	// command.
	Proc *proc.Result `json:"-"`
}

// Status is a short reading of how the command ended: "exit 0", "exit 2",
// "timed out after 1000 ms", "killed by SIGKILL", "denied".
func (r *Result) Status() string {
	switch {
	case r.Denied:
		return "denied"
	case r.JobID != "" && r.Proc == nil:
		return "started in the background as " + r.JobID
	case r.TimedOut:
		return fmt.Sprintf("timed out after %d ms", r.DurationMS)
	case r.Cancelled:
		return "cancelled"
	case r.Signal != "":
		return "killed by " + r.Signal
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// ForModel returns a copy of the result as a model should read it in JSON
// (the form corral mcp answers with): the output with terminal escape
// sequences and control characters other than newline and tab removed,
// and carriage-return overwrites resolved, as Text does. Every other field
// is the result's own; command output is only ever in Stdout and Stderr.
func (r *Result) ForModel() *Result {
	c := *r
	c.Stdout, c.Stderr = cleanText(r.Stdout), cleanText(r.Stderr)
	return &c
}

// Text renders the result for a model that is given text, such as corral
// shell's. Everything the model must be able
// to trust (status, exit code, timeout, truncation, notes) comes first, on
// lines the command cannot write; the output follows inside fences tagged
// with a random id that is checked not to occur in the output, so output
// that imitates a fence, a status line or a closing tag stays visibly
// inside its own section. Terminal escape sequences and other control
// characters are removed from the output.
func (r *Result) Text() string {
	out, errs := cleanText(r.Stdout), cleanText(r.Stderr)
	id := fenceID(out, errs)
	var b strings.Builder
	fmt.Fprintf(&b, "[corral %s] %s", id, r.Status())
	if r.Denied {
		fmt.Fprintf(&b, ": %s\n", r.Reason)
		return b.String()
	}
	if r.JobID != "" && r.Proc == nil {
		b.WriteString("\nRead its output with job_output; stop it with job_kill.\n")
		return b.String()
	}
	fmt.Fprintf(&b, " · %d ms", r.DurationMS)
	if r.Cwd != "" {
		fmt.Fprintf(&b, " · cwd %s", r.Cwd)
	}
	b.WriteByte('\n')
	if r.TimedOut {
		b.WriteString("The command was stopped at its timeout; the output below is what it printed before. Run long commands in the background.\n")
	}
	if r.SessionRestarted {
		b.WriteString("The shell ended without saving its state; the session continues with the state from before this command.\n")
	}
	if r.Truncated {
		fmt.Fprintf(&b, "Output truncated (stdout %d bytes, stderr %d bytes); the middle was omitted.", r.StdoutBytes, r.StderrBytes)
		if r.FullOutputPath != "" {
			fmt.Fprintf(&b, " Full output: %s", r.FullOutputPath)
		}
		b.WriteByte('\n')
	}
	for _, n := range r.Notes {
		b.WriteString("Note: " + n + "\n")
	}
	section(&b, "stdout", id, out)
	section(&b, "stderr", id, errs)
	if out == "" && errs == "" {
		b.WriteString("(no output)\n")
	}
	return b.String()
}

func section(b *strings.Builder, name, id, s string) {
	if s == "" {
		return
	}
	fmt.Fprintf(b, "<%s %s>\n", name, id)
	b.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "</%s %s>\n", name, id)
}

// fenceID returns a random id that occurs in none of texts.
func fenceID(texts ...string) string {
	for {
		var raw [6]byte
		rand.Read(raw[:])
		id := hex.EncodeToString(raw[:])
		found := false
		for _, t := range texts {
			if strings.Contains(t, id) {
				found = true
			}
		}
		if !found {
			return id
		}
	}
}

var ansi = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)
})

// cleanText removes terminal escape sequences and control characters other
// than newline and tab, and resolves carriage-return overwrites (progress
// bars) to the last text of each line.
func cleanText(s string) string {
	if s == "" {
		return s
	}
	s = ansi().ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.ContainsRune(s, '\r') {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if k := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); k >= 0 {
				lines[i] = l[k+1:]
			}
		}
		s = strings.Join(lines, "\n")
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// noteWait records a wait for the session's previous command long enough
// to matter to the timeout.
func (r *Result) noteWait(waited time.Duration) {
	r.WaitedMS = waited.Milliseconds()
	if waited >= 100*time.Millisecond {
		r.Notes = append(r.Notes, fmt.Sprintf("waited %d ms for the session's previous command; the timeout counts from the call", r.WaitedMS))
	}
}
