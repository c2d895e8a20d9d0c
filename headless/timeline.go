package headless

import (
	"math"
	"strings"
	"time"

	"github.com/corralrun/corral/internal/setting"
)

// Timeline folds a turn's events, in stream order, into what a person
// reads of the turn: its tool calls, the session, the model, the final
// answer and the errors the agent reported. A Turn builds its
// Result.Tools, SessionID, Model and AgentErrors with a Timeline; a
// reader of a logged stream builds the same account with a Parser and a
// Timeline.
//
// A call opens with its KindToolUse event and closes with the
// KindToolResult event of the same id; its Start and duration come from
// the events' Time. A second open or result for a call is ignored, so a
// log that holds a line twice reads as the stream did. A result for a call
// never seen open becomes an instantaneous call when it names its tool
// (Codex reports some items only once completed), and is ignored
// otherwise.
//
// Memory is bounded: at most MaxTools calls are kept (later ones are
// counted in ToolsDropped, though still watched for stalls while open),
// their texts are cut at MaxDetail bytes, at most 20 errors are kept, and
// the answer is bounded as the events' text is.
//
// The zero value is ready to use. A Timeline is not safe for concurrent
// use. Set its fields before the first Add.
type Timeline struct {
	// MaxTools bounds the calls kept. Zero means DefaultMaxTools; negative
	// keeps none.
	MaxTools int

	// StallLimit, if set, gives a call its stall limit from its tool's
	// name (ToolCall.StallLimitMS; 0 for none), such as Spec.StallLimit.
	// A Turn uses its Spec's.
	StallLimit func(tool string) time.Duration

	// Yield, if set, gives a call from its tool's name how long after its
	// start it holds off the idle watchdog; 0 means for as long as it is
	// open. A Turn gives Codex's commands Spec.CommandYield.
	Yield func(tool string) time.Duration

	tools     []ToolCall
	dropped   int
	calls     map[string]*callState // the calls kept and those still open
	open      []*callState          // the calls without their result yet
	sessionID string
	model     string
	errors    []string

	codexAnswer, resultText, lastText string
}

// callState is what the timeline knows of a call.
type callState struct {
	id, name, parent string
	start            time.Time
	limit            time.Duration
	yield            time.Duration // 0: holds off idleness while open
	idx              int           // in tools, or -1 when it was dropped
	open             int           // in Timeline.open, or -1 once closed
}

// maxErrors bounds the errors a Timeline keeps.
const maxErrors = 20

// Add folds one event into the timeline. Events must come in stream
// order; Add does not keep e.
func (tl *Timeline) Add(e *Event) {
	switch e.Kind {
	case KindInit:
		tl.session(e.SessionID)
	case KindText:
		if strings.TrimSpace(e.Text) == "" {
			break
		}
		t := textOf(e)
		tl.lastText = t
		if e.Type == "item.completed" { // a Codex agent message, complete
			tl.codexAnswer = t
		}
	case KindToolUse:
		tl.openCall(e)
	case KindToolResult:
		tl.closeCall(e)
	case KindResult:
		tl.session(e.SessionID)
		if strings.TrimSpace(e.Text) != "" {
			tl.resultText = textOf(e)
		}
		for _, msg := range e.Errors {
			tl.addError(msg)
		}
	case KindError, KindRetry:
		tl.addError(e.Error)
	}
	// Claude Code's own error messages carry the model "<synthetic>":
	// keep the session's real one.
	if e.Model != "" && (e.Kind == KindInit || e.Model != "<synthetic>") {
		tl.model = e.Model
	}
}

func textOf(e *Event) string {
	if e.TextTruncated {
		return e.Text + "…"
	}
	return e.Text
}

func (tl *Timeline) session(id string) {
	if id != "" {
		tl.sessionID = id
	}
}

// addError keeps an error, unless it repeats the one before: an agent
// retrying its model API reports the same failure at each try.
func (tl *Timeline) addError(msg string) {
	msg = clip(msg, 1024)
	if msg != "" && len(tl.errors) < maxErrors && (len(tl.errors) == 0 || tl.errors[len(tl.errors)-1] != msg) {
		tl.errors = append(tl.errors, msg)
	}
}

func (tl *Timeline) openCall(e *Event) {
	if _, seen := tl.calls[e.ToolID]; seen {
		return
	}
	c := &callState{id: e.ToolID, name: e.ToolName, parent: e.ParentToolID, start: e.Time, open: len(tl.open)}
	if tl.StallLimit != nil {
		c.limit = max(tl.StallLimit(e.ToolName), 0)
	}
	if tl.Yield != nil {
		c.yield = max(tl.Yield(e.ToolName), 0)
	}
	c.idx = tl.keep(ToolCall{ID: e.ToolID, Name: e.ToolName, ParentID: e.ParentToolID, Detail: e.Detail,
		Start: e.Time, Open: true, StallLimitMS: ms(c.limit)})
	if tl.calls == nil {
		tl.calls = map[string]*callState{}
	}
	tl.calls[e.ToolID] = c
	tl.open = append(tl.open, c)
}

func (tl *Timeline) closeCall(e *Event) {
	c, seen := tl.calls[e.ToolID]
	if !seen {
		if e.ToolName == "" {
			return
		}
		i := tl.keep(ToolCall{ID: e.ToolID, Name: e.ToolName, ParentID: e.ParentToolID, Detail: e.Detail,
			Start: e.Time, Error: e.IsError, ErrorText: errorText(e)})
		if i >= 0 {
			if tl.calls == nil {
				tl.calls = map[string]*callState{}
			}
			tl.calls[e.ToolID] = &callState{id: e.ToolID, idx: i, open: -1}
		}
		return
	}
	if c.open < 0 {
		return // its result came already
	}
	last := tl.open[len(tl.open)-1]
	tl.open[c.open], last.open = last, c.open
	tl.open[len(tl.open)-1] = nil
	tl.open = tl.open[:len(tl.open)-1]
	c.open = -1
	if c.idx < 0 {
		delete(tl.calls, e.ToolID) // dropped: forget it, memory stays bounded
		return
	}
	tc := &tl.tools[c.idx]
	tc.Open = false
	tc.Error = e.IsError
	tc.ErrorText = errorText(e)
	tc.DurationMS = ms(max(e.Time.Sub(c.start), 0))
	if tc.Detail == "" {
		tc.Detail = e.Detail
	}
}

// keep appends a call and returns its index, unless the timeline is full:
// then it counts the call and returns -1.
func (tl *Timeline) keep(c ToolCall) int {
	if len(tl.tools) >= setting.Or(tl.MaxTools, DefaultMaxTools) {
		tl.dropped++
		return -1
	}
	tl.tools = append(tl.tools, c)
	return len(tl.tools) - 1
}

// errorText is what a failed call's result said, trimmed and cut.
func errorText(e *Event) string {
	if !e.IsError {
		return ""
	}
	s, cut := clipText(strings.TrimSpace(e.Text), MaxDetail)
	if cut || (e.TextTruncated && s != "") {
		s += "…"
	}
	return s
}

// Tools returns the calls kept, in the order they were opened, as of now:
// an open call's DurationMS runs until now. The slice is the caller's.
func (tl *Timeline) Tools(now time.Time) []ToolCall {
	out := append([]ToolCall{}, tl.tools...)
	for i := range out {
		if out[i].Open {
			out[i].DurationMS = ms(max(now.Sub(out[i].Start), 0))
		}
	}
	return out
}

// ToolsDropped counts the calls not kept because MaxTools were.
func (tl *Timeline) ToolsDropped() int { return tl.dropped }

// SessionID is the latest session id the agent reported (Claude's init and
// result, Codex's thread.started).
func (tl *Timeline) SessionID() string { return tl.sessionID }

// Model is the latest model the agent reported.
func (tl *Timeline) Model() string { return tl.model }

// Answer is the final answer as far as the stream has told it: Codex's
// last completed agent message; else the text of the last result that had
// one; else the last text the agent said. A cut text ends with "…".
func (tl *Timeline) Answer() string {
	switch {
	case tl.codexAnswer != "":
		return tl.codexAnswer
	case tl.resultText != "":
		return tl.resultText
	}
	return tl.lastText
}

// Errors returns the errors the agent reported (assistant error codes,
// result errors, Codex error messages, the failures of model API calls it
// retried), at most 20, each cut at 1 KiB, a repeat of the one before
// left out.
// The slice is the caller's.
func (tl *Timeline) Errors() []string { return append([]string(nil), tl.errors...) }

// idleHold reports whether an open call holds off the idle watchdog at
// now; next is when the earliest hold that will lapse does (zero when
// none will), and lapsed the latest moment a lapsed hold of a call still
// open ended (zero when none has).
func (tl *Timeline) idleHold(now time.Time) (held bool, next, lapsed time.Time) {
	for _, c := range tl.open {
		if c.yield <= 0 {
			held = true
			continue
		}
		end := c.start.Add(c.yield)
		if now.Before(end) {
			held = true
			if next.IsZero() || end.Before(next) {
				next = end
			}
		} else if end.After(lapsed) {
			lapsed = end
		}
	}
	return held, next, lapsed
}

// nextStall returns when the first open call with a stall limit will pass
// it; zero when none has a limit.
func (tl *Timeline) nextStall() time.Time {
	var d time.Time
	for _, c := range tl.open {
		if c.limit > 0 && (d.IsZero() || c.start.Add(c.limit).Before(d)) {
			d = c.start.Add(c.limit)
		}
	}
	return d
}

// stalled returns the oldest call open past its stall limit at now, or
// nil.
func (tl *Timeline) stalled(now time.Time) *ToolCall {
	var worst *callState
	for _, c := range tl.open {
		if c.limit > 0 && !now.Before(c.start.Add(c.limit)) && (worst == nil || c.start.Before(worst.start)) {
			worst = c
		}
	}
	if worst == nil {
		return nil
	}
	tc := &ToolCall{ID: worst.id, Name: worst.name, ParentID: worst.parent, Start: worst.start,
		DurationMS: ms(now.Sub(worst.start)), Open: true, StallLimitMS: ms(worst.limit)}
	if worst.idx >= 0 {
		tc.Detail = tl.tools[worst.idx].Detail
	}
	return tc
}

// Duration is how long the call was open: until its result or, for an
// open call, until the moment its timeline was read (DurationMS).
func (c *ToolCall) Duration() time.Duration {
	return time.Duration(math.Round(c.DurationMS*1000)) * time.Microsecond
}

// StallLimit is the call's stall limit (StallLimitMS); 0 means none.
func (c *ToolCall) StallLimit() time.Duration {
	return time.Duration(math.Round(c.StallLimitMS*1000)) * time.Microsecond
}

// Stalled reports whether the call was open past its stall limit when its
// timeline was read.
func (c *ToolCall) Stalled() bool {
	return c.Open && c.StallLimitMS > 0 && c.DurationMS >= c.StallLimitMS
}
