package headless

import (
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/setting"
)

// state is what the stream has told so far. Guarded by Turn.mu.
type state struct {
	format       Format
	lines, bytes int64
	linesCut     int64
	bytesCut     int64
	events       int64
	parseErrors  int64
	sample       string
	validJSON    bool
	lastText     string
	sawInit      bool
	permMode     string
	numTurns     int
	cost         float64
	hasCost      bool
	usage        *Usage
	lastUsage    *Usage
	modelUsage   []byte
	segments     int
	lastResult   *resultInfo
	answer       string
	hasAnswer    bool
	tl           Timeline // tool calls, session, model, agent errors
	bg           []BackgroundTask
	bgSince      time.Time   // the latest result while tasks were live; zero when none are
	failure      *apiFailure // a model API failure not recovered from
	retryUntil   time.Time   // when the agent's announced retry is due
	end          FinalizedBy // a terminal condition seen by a reader
	authLine     string
	permWhy      string
	finalized    bool
	stalled      *ToolCall
	spend        spendState
	spent        *Spend // the last spend counted, nil before the first
}

// apply folds a parsed line into the state. It reports whether the line
// ended the turn and whether the deadlines may have moved earlier. Called
// with t.mu held.
func (t *Turn) apply(in *lineInfo, now time.Time) (end, moved bool) {
	s := &t.st
	s.events += int64(len(in.events))
	if in.invalid != "" {
		s.parseErrors++
		if s.sample == "" {
			s.sample = fmt.Sprintf("line %d (%s): %s", t.parser.p.line, in.invalid, in.sample)
		}
		s.lastText = in.sample
		return false, false
	}
	s.validJSON = true
	setEnd := func(by FinalizedBy) {
		if s.end == "" {
			s.end = by
			end = true
		}
	}
	if s.format == FormatAuto && t.parser.Format != FormatAuto {
		s.format = t.parser.Format
	}
	req := t.spec.RequirePermissionMode
	if req != "" && s.format == FormatCodex {
		s.permWhy = "permission mode " + req + " was required, but codex streams do not report one"
		setEnd(FinalizedByPermissionMode)
	}
	if in.init {
		s.sawInit = true
		if in.hasPerm {
			s.permMode = in.permMode
		}
		if req != "" && s.format == FormatClaude && s.permMode != req {
			got := s.permMode
			if !in.hasPerm {
				got = "none"
			}
			s.permWhy = fmt.Sprintf("permission mode %s was required but the agent reports %s: pass --permission-mode %s (or check that a setting or policy does not override it)", req, got, req)
			setEnd(FinalizedByPermissionMode)
		}
	}
	if in.usage != nil {
		s.lastUsage = in.usage
		s.spend.note(in, t.spec.Prices, s.format)
	}
	final := false
	for i := range in.events {
		e := &in.events[i]
		s.tl.Add(e)
		switch e.Kind {
		case KindText:
			s.lastText = e.Text
		case KindToolUse:
			if req != "" && !s.sawInit {
				s.permWhy = "permission mode " + req + " was required, but the agent called a tool before reporting its mode"
				setEnd(FinalizedByPermissionMode)
			}
			moved = true
		case KindToolResult:
			moved = true
		case KindResult:
			final = e.Final
		}
	}
	if in.bgSet {
		s.bg = append(s.bg[:0], t.parser.p.bg...)
		if len(s.bg) == 0 {
			s.bgSince = time.Time{}
		}
		moved = true
	}
	switch {
	case in.failure != nil:
		s.failure = in.failure
		s.retryUntil = time.Time{}
		if in.failure.delay > 0 {
			s.retryUntil = now.Add(in.failure.delay)
		}
	case in.progress:
		s.failure, s.retryUntil = nil, time.Time{}
	}
	if in.authFailed {
		s.authLine = t.red.String(in.authWhy)
		setEnd(FinalizedByAuth)
	}
	if in.hasAnswer {
		s.answer, s.hasAnswer = in.answer, true
	}
	if r := in.result; r != nil {
		s.segments++
		s.lastResult = r
		if r.hasCost {
			s.cost, s.hasCost = r.cost, true
		}
		if r.hasTurns {
			s.numTurns = r.numTurns
		} else if r.codex {
			s.numTurns++
		}
		if r.usage != nil {
			s.usage = r.usage
		}
		if r.modelUsage != nil {
			s.modelUsage = r.modelUsage
		}
		if req != "" && !s.sawInit {
			s.permWhy = "permission mode " + req + " was required, but the agent ended a turn without reporting its mode"
			setEnd(FinalizedByPermissionMode)
		}
		if final && t.overCeiling(t.spend()) == "" {
			setEnd(FinalizedByResult)
		} else if final {
			// The result crossed a ceiling: the turn is over all the
			// same, and the ceiling says how.
		} else if len(s.bg) > 0 {
			s.bgSince = now
			moved = true
		}
	}
	if in.usage != nil || in.result != nil {
		sp := t.spend()
		s.spent = &sp
		if why := t.overCeiling(sp); why != "" {
			s.spend.why = why
			setEnd(FinalizedByMaxBudget)
		}
	}
	return end, moved
}

// result snapshots the state into a Result. Called with t.mu held.
func (t *Turn) result(by FinalizedBy, end time.Time) *Result {
	s := &t.st
	r := &Result{
		FinalizedBy:      by,
		Format:           s.format,
		SessionID:        s.tl.SessionID(),
		Model:            s.tl.Model(),
		PermissionMode:   s.permMode,
		NumTurns:         s.numTurns,
		Usage:            s.usage,
		LastCallUsage:    s.lastUsage,
		ModelUsage:       s.modelUsage,
		Segments:         s.segments,
		ToolsDropped:     s.tl.ToolsDropped(),
		StalledTool:      s.stalled,
		Events:           s.events,
		Lines:            s.lines,
		Bytes:            s.bytes,
		ParseErrors:      s.parseErrors,
		ParseErrorSample: s.sample,
		LinesCut:         s.linesCut,
		BytesCut:         s.bytesCut,
		ExitCode:         -1,
		Start:            t.start,
		Duration:         end.Sub(t.start),
		TranscriptPath:   t.spec.TranscriptPath,
		AgentErrors:      s.tl.Errors(),
	}
	r.DurationMS = ms(r.Duration)
	sp := t.spend()
	r.Spend = &sp
	if sp.CostReported || sp.CostKnown && len(sp.Models) > 0 {
		cost := sp.CostUSD
		r.CostUSD = &cost
		r.CostEstimated = !sp.CostReported
	}
	if sp.UnpricedModel != "" && (t.spec.MaxCostUSD > 0 || !sp.CostReported) {
		r.SpendNote = fmt.Sprintf("no price for model %s (add it with a prices file): the cost is not known, and a cost ceiling cannot hold; token ceilings do", sp.UnpricedModel)
	}
	if by != FinalizedByResult && len(s.bg) > 0 {
		r.BackgroundTasks = append([]BackgroundTask(nil), s.bg...)
	}
	if s.failure != nil {
		r.APIFailure = s.failure.public()
		r.APIFailure.Error = t.red.String(r.APIFailure.Error)
	}
	if r.Usage == nil && s.lastUsage != nil {
		r.Usage = s.lastUsage
	}
	r.Tools = s.tl.Tools(end)
	for i := range r.Tools {
		// The inputs and outputs of tools may hold secrets the agent was
		// given; the Result is stored and printed.
		c := &r.Tools[i]
		c.Detail, c.ErrorText = t.red.String(c.Detail), t.red.String(c.ErrorText)
	}
	switch {
	case s.hasAnswer:
		r.Text = s.answer
	case s.lastResult != nil && s.lastResult.hasText:
		r.Text, r.TextTruncated = s.lastResult.text, s.lastResult.textCut
	default:
		r.Text = s.lastText
	}
	// The answer may quote what the agent was given, secrets included;
	// the Result is stored and printed, as the transcript is.
	r.Text = t.red.String(r.Text)
	if s.lastResult != nil {
		r.Subtype, r.IsError = s.lastResult.subtype, s.lastResult.isError
	}
	if t.p != nil {
		if _, errOut := t.p.Output(); errOut.Bytes > 0 {
			r.StderrTail = t.red.String(tail(errOut, 4096))
		}
	}
	return r
}

func (t *Turn) outcome(by FinalizedBy, r *Result) *outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := &outcome{
		by:        by,
		result:    t.st.lastResult,
		errs:      t.st.tl.errors,
		authLine:  t.st.authLine,
		permWhy:   t.st.permWhy,
		stalled:   t.st.stalled,
		validJSON: t.st.validJSON,
		lastText:  t.st.lastText,
		stderr:    r.StderrTail,
		exitCode:  r.ExitCode,
		failure:   t.st.failure,
		bg:        t.st.bg,
		bgTimeout: setting.Or(t.spec.BackgroundTimeout, DefaultBackgroundTimeout),
		spendWhy:  t.st.spend.why,
	}
	if r.Proc != nil {
		o.signal = r.Proc.Signal
		if r.Proc.Cancelled || r.Proc.TimedOut {
			o.signal = 0 // corral sent it
		}
	}
	return o
}

// tail returns the last n bytes of an output as text.
func tail(o corral.Output, n int) string {
	s := o.Text()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
