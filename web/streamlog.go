package web

import (
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
)

// maxCalls bounds the tool calls an execution page lists; the log has
// them all.
const maxCalls = 2000

// streamLog reads the agent stream an execution logged (its "event"
// records, one stream line each) with the headless package's own Parser
// and Timeline: the page shows the tool calls, answer and errors exactly
// as the turn read them.
type streamLog struct {
	p    headless.Parser
	tl   headless.Timeline
	prev string
}

// newStreamLog returns a reader that gives calls the stall limits the
// service gives the agent's turns (its stall_timeout for MCP tools, the
// headless default when unset); a deleted agent (nil) gets the defaults.
func newStreamLog(a *corral.Agent) *streamLog {
	spec := &headless.Spec{}
	if a != nil {
		spec.StallTimeout = a.StallTimeout.D()
	}
	return &streamLog{tl: headless.Timeline{MaxTools: maxCalls, StallLimit: spec.StallLimit}}
}

// add reads one logged stream line. The service logs a line once for each
// event it yields, so a line repeated at once is read once. A line that
// does not end its JSON object was cut by the log's line bound: it is read
// up to the cut, so that a huge tool result still closes its call.
func (l *streamLog) add(at time.Time, line string) {
	if line == l.prev {
		return
	}
	l.prev = line
	parse := l.p.Parse
	if t := strings.TrimSpace(line); t != "" && t[len(t)-1] != '}' {
		parse = l.p.ParseCut
	}
	evs := parse([]byte(line), at)
	for i := range evs {
		l.tl.Add(&evs[i])
	}
}
