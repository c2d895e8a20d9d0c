package shell

import (
	"encoding/json"
	"io"
	"os"
	"sync"
	"time"

	"github.com/corralrun/corral/internal/redact"
)

// AuditRecord is one line of the audit trail. Command and Reason are
// redacted before the sink sees them.
type AuditRecord struct {
	Time time.Time `json:"time"`
	// Event is "run" (a command ended), "denied", "job_start", "job_end",
	// "session_open", "session_reset", "session_close" or "error".
	Event     string `json:"event"`
	Session   string `json:"session,omitempty"`
	Job       string `json:"job,omitempty"`
	Command   string `json:"command,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Reason    string `json:"reason,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Signal    string `json:"signal,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	// DurationMS is the command's run time.
	DurationMS       *int64 `json:"duration_ms,omitempty"`
	Truncated        bool   `json:"truncated,omitempty"`
	SessionRestarted bool   `json:"session_restarted,omitempty"`
	Killed           int    `json:"killed,omitempty"`
	Containment      string `json:"containment,omitempty"`
	Pid              int    `json:"pid,omitempty"`
	Error            string `json:"error,omitempty"`
}

// AuditSink receives audit records. Audit must not block for long: the
// command's result waits for it.
type AuditSink interface {
	Audit(AuditRecord)
}

// AuditJSON returns a sink writing each record to w as one JSON line.
// Writes are serialized; a write error is dropped (the audit must not stop
// the commands), and counted by the sink's Errors method.
func AuditJSON(w io.Writer) *JSONSink { return &JSONSink{w: w} }

// JSONSink writes audit records as JSON lines.
type JSONSink struct {
	mu   sync.Mutex
	w    io.Writer
	errs int
}

// Audit writes r as one line.
func (s *JSONSink) Audit(r AuditRecord) {
	b, err := json.Marshal(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		_, err = s.w.Write(append(b, '\n'))
	}
	if err != nil {
		s.errs++
	}
}

// Errors returns how many records could not be written.
func (s *JSONSink) Errors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs
}

// audit redacts r against env (and secret-looking values everywhere) and
// sends it to the sink.
func (t *Tool) audit(r AuditRecord, env []string) {
	if t.Audit == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	red := redact.New(redact.EnvValues(append(os.Environ(), env...))...)
	r.Command = red.String(r.Command)
	r.Reason = red.String(r.Reason)
	r.Error = red.String(r.Error)
	t.Audit.Audit(r)
}

func (t *Tool) auditEnd(event, session, command, dir string, res *Result, env []string) {
	if t.Audit == nil {
		return
	}
	code, dur := res.ExitCode, res.DurationMS
	r := AuditRecord{
		Event: event, Session: session, Job: res.JobID, Command: command, Dir: dir,
		Decision: "allow", ExitCode: &code, Signal: res.Signal, TimedOut: res.TimedOut,
		Cancelled: res.Cancelled, DurationMS: &dur, Truncated: res.Truncated,
		SessionRestarted: res.SessionRestarted, Killed: res.Killed, Containment: res.Containment,
	}
	if res.Proc != nil {
		r.Pid = res.Proc.Pid
	}
	t.audit(r, env)
}
