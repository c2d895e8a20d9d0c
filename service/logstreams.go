package service

import (
	"sync"

	"github.com/corralrun/corral/internal/redact"
	"github.com/corralrun/corral/service/internal/runlog"
)

// logStreams redacts each output stream of a run as a whole on its way to
// the run's log, so a secret spread over lines (a private key's body) is
// masked, not just the line that starts it. Each stream is fed by one
// goroutine; the streams are fed at once.
type logStreams struct {
	red *redact.Redactor
	lw  *runlog.Writer
	mu  sync.Mutex
	m   map[string]*redact.Lines
}

func newLogStreams(red *redact.Redactor, lw *runlog.Writer) *logStreams {
	return &logStreams{red: red, lw: lw, m: map[string]*redact.Lines{}}
}

// line logs one line of a stream, redacted.
func (s *logStreams) line(stream string, line []byte) {
	s.mu.Lock()
	l := s.m[stream]
	if l == nil {
		l = s.red.Lines(func(b []byte) { s.lw.Write(stream, b) })
		s.m[stream] = l
	}
	s.mu.Unlock()
	l.Line(line)
}

// close logs what the redactors withheld; the streams are over.
func (s *logStreams) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.m {
		l.Close()
	}
}

// secretValues are the values masked in a run's log and record: the
// service's own secrets and the secret-looking variables the run is given.
func secretValues(agentEnv map[string]string, env, secrets []string) []string {
	all := make([]string, 0, len(agentEnv)+len(env))
	for k, v := range agentEnv {
		all = append(all, k+"="+v)
	}
	return append(redact.EnvValues(append(all, env...)), secrets...)
}
