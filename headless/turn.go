package headless

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/internal/redact"
	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/proc"
)

// Turn is a headless agent turn in progress. Its methods are safe for
// concurrent use.
//
// A Turn has one goroutine of its own, which watches the stream's deadlines,
// ends the turn and then tears the process tree down; the core's goroutines
// (see proc.Process) read the stream and call the parser. All of them have
// ended when TornDown is closed, which happens no later than the end of
// the turn plus Spec.Linger (for a turn the agent ended itself) plus the
// core's grace and drain bounds.
type Turn struct {
	spec    Spec
	p       *proc.Process
	start   time.Time
	red     *redact.Redactor
	tr      *transcript
	lastOut atomic.Int64 // unix nanoseconds of the latest stdout bytes
	dropped atomic.Int64 // events subscribers' full channels did not take

	// Owned by the stdout reader (the core's goroutine) until teardown.
	parser Parser
	lines  capture.Lines
	now    time.Time
	// Owned by the stderr reader until teardown.
	errLines capture.Lines

	mu sync.Mutex
	st state

	pubMu     sync.Mutex
	subs      []*Subscription
	pubClosed bool

	endCh    chan struct{} // a terminal condition was seen in the stream
	changed  chan struct{} // deadlines may have moved earlier
	cancelCh chan struct{}
	cancel   sync.Once
	done     chan struct{} // the turn has ended: res is set
	torn     chan struct{} // the tree is gone: final is set
	res      *Result
	final    *Result
	err      error
}

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
	usage        *Usage
	lastUsage    *Usage
	modelUsage   []byte
	segments     int
	lastResult   *resultInfo
	answer       string
	hasAnswer    bool
	tl           Timeline // tool calls, session, model, agent errors
	bg           []string
	end          FinalizedBy // a terminal condition seen by a reader
	authLine     string
	permWhy      string
	finalized    bool
	stalled      *ToolCall
}

// Run starts a turn and waits for its end: it is Start followed by
// Turn.Wait. The tree may still be being torn down when Run returns;
// Result.Teardown is closed when it is gone and the turn's goroutines have
// ended.
func Run(ctx context.Context, spec *Spec) (*Result, error) {
	t, err := Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return t.Wait()
}

// Start spawns the agent under the supervision core and returns at once.
// The turn ends when the agent ends it (a result while no background task
// is live), when a watchdog fires (stall, idle, budget), on a fast abort
// (authentication failure, permission mode), when the caller cancels it
// (ctx or Cancel), or when the agent's process ends; Wait reports the end
// within milliseconds of it, and the tree is torn down in the background
// (see TornDown and Close).
//
// Start returns an error, and nothing runs, when the spec is invalid, the
// transcript cannot be created, or the agent cannot be started (the error
// then wraps proc.ErrNotFound or proc.ErrNotExecutable).
func Start(ctx context.Context, spec *Spec) (*Turn, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("headless: not started: %w", err)
	}
	t := &Turn{
		spec:     *spec,
		red:      redact.New(redact.EnvValues(spec.Env)...),
		endCh:    make(chan struct{}, 1),
		changed:  make(chan struct{}, 1),
		cancelCh: make(chan struct{}),
		done:     make(chan struct{}),
		torn:     make(chan struct{}),
	}
	t.initStream()
	t.errLines = capture.Lines{Max: 64 << 10, Func: t.onStderrLine}
	if spec.TranscriptPath != "" {
		tr, err := openTranscript(spec.TranscriptPath, setting.Or(spec.MaxTranscript, DefaultMaxTranscript), t.red)
		if err != nil {
			return nil, err
		}
		t.tr = tr
	}
	label := spec.Label
	if label == "" {
		label = "headless"
	}
	ps := &proc.Spec{
		Args:        spec.Args,
		Dir:         spec.Dir,
		EnvMode:     spec.EnvMode,
		EnvAllow:    spec.EnvAllow,
		Env:         spec.Env,
		Stdin:       spec.Stdin,
		Grace:       spec.Grace,
		MaxOutput:   spec.MaxOutput,
		Stdout:      stdoutSink{t},
		Stderr:      stderrSink{t},
		Containment: spec.Containment,
		Limits:      spec.Limits,
		Label:       label,
	}
	now := time.Now()
	t.lastOut.Store(now.UnixNano())
	p, err := proc.Start(context.Background(), ps)
	if err != nil {
		t.tr.close()
		if spec.TranscriptPath != "" {
			os.Remove(spec.TranscriptPath)
		}
		return nil, fmt.Errorf("headless: %w", err)
	}
	t.p = p
	t.start = now
	if spec.OnStart != nil {
		spec.OnStart(p.Handle())
	}
	go t.run(ctx)
	return t, nil
}

// initStream sets up the reading of the stream: the line splitter, the
// parser and the timeline, with the spec's bounds and stall limits.
func (t *Turn) initStream() {
	spec := &t.spec
	t.parser = Parser{Format: spec.Format, MaxLine: spec.MaxLine, MaxEventText: spec.MaxEventText, MaxEventRaw: spec.MaxEventRaw}
	t.st.format = spec.Format
	t.st.tl = Timeline{StallLimit: spec.StallLimit}
	t.lines = capture.Lines{Max: setting.Or(spec.MaxLine, DefaultMaxLine), Func: t.onLine}
}

// Handle identifies the agent's tree for proc.Reclaim after a crash.
func (t *Turn) Handle() proc.Handle { return t.p.Handle() }

// Done returns a channel closed when the turn has ended and Wait returns.
func (t *Turn) Done() <-chan struct{} { return t.done }

// TornDown returns a channel closed when the agent's tree is gone and every
// goroutine of the turn has ended.
func (t *Turn) TornDown() <-chan struct{} { return t.torn }

// Wait waits for the end of the turn and returns its result, which is never
// nil. The tree may still be being torn down (see Close). The error
// reports a failure of supervision itself, never the agent's own failure,
// which is in the result. Wait may be called any number of times.
func (t *Turn) Wait() (*Result, error) {
	<-t.done
	r := *t.res
	return &r, nil
}

// Close waits for the end of the turn and for its tree to be gone, and
// returns the result completed with the process's account (Process, Proc,
// ExitCode, Signal). It does not end the turn: call Cancel first to stop it
// early.
func (t *Turn) Close() (*Result, error) {
	<-t.torn
	r := *t.final
	return &r, t.err
}

// Cancel ends the turn on the caller's request: SIGINT to the agent's main
// process, so that it can finish its current step, then, after
// Spec.InterruptGrace, the core's SIGTERM → grace → SIGKILL on the whole
// tree. The turn ends (Wait returns) when the agent has exited or the
// interval is over, with status cancelled. Cancel returns at once; after
// the end of the turn it does nothing.
func (t *Turn) Cancel() { t.cancel.Do(func() { close(t.cancelCh) }) }

// Subscription delivers a turn's events on a channel.
type Subscription struct {
	// C receives the events published after Subscribe, in order. It is
	// closed at the end of the turn or by Close.
	C <-chan Event

	c       chan Event
	t       *Turn
	dropped atomic.Int64
	closed  bool // guarded by t.pubMu
}

// Subscribe returns a subscription to the turn's events with a channel of
// the given buffer (at least 1). Publishing never blocks the stream: an
// event that finds the buffer full is dropped and counted in Dropped and
// in Result.EventsDropped. Events before the call are not replayed (use
// Spec.OnEvent to see every event).
func (t *Turn) Subscribe(buffer int) *Subscription {
	c := make(chan Event, max(buffer, 1))
	s := &Subscription{C: c, c: c, t: t}
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if t.pubClosed {
		close(c)
		s.closed = true
		return s
	}
	t.subs = append(t.subs, s)
	return s
}

// Dropped returns how many events did not fit in the buffer.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close ends the subscription and closes C.
func (s *Subscription) Close() {
	t := s.t
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.c)
	for i, x := range t.subs {
		if x == s {
			t.subs = append(t.subs[:i], t.subs[i+1:]...)
			break
		}
	}
}

// publish hands events to OnEvent and the subscribers, unless the turn has
// ended.
func (t *Turn) publish(evs []Event) {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if t.pubClosed {
		return
	}
	var dropped int64
	for i := range evs {
		e := &evs[i]
		if t.spec.OnEvent != nil {
			t.spec.OnEvent(*e)
		}
		for _, s := range t.subs {
			select {
			case s.c <- *e:
			default:
				s.dropped.Add(1)
				dropped++
			}
		}
	}
	t.dropped.Add(dropped)
}

func (t *Turn) closePublishing() {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	t.pubClosed = true
	for _, s := range t.subs {
		if !s.closed {
			s.closed = true
			close(s.c)
		}
	}
	t.subs = nil
}

type stdoutSink struct{ t *Turn }

func (s stdoutSink) Write(p []byte) (int, error) {
	t := s.t
	t.now = time.Now()
	t.lastOut.Store(t.now.UnixNano())
	t.lines.Write(p)
	t.mu.Lock()
	t.st.bytes += int64(len(p))
	t.st.linesCut, t.st.bytesCut = t.lines.Cut, t.lines.Skipped
	t.mu.Unlock()
	return len(p), nil
}

type stderrSink struct{ t *Turn }

func (s stderrSink) Write(p []byte) (int, error) {
	s.t.errLines.Write(p)
	return len(p), nil
}

// onStderrLine aborts the turn when the agent reports an authentication
// failure on stderr, as Claude Code does while it keeps running.
func (t *Turn) onStderrLine(line []byte, _ bool) {
	if !matchAny(string(line), authTexts) {
		return
	}
	t.mu.Lock()
	if !t.st.finalized && t.st.end == "" {
		t.st.end = FinalizedByAuth
		t.st.authLine = "stderr: " + t.red.String(string(line))
	}
	t.mu.Unlock()
	t.signalEnd()
}

// onLine parses one stdout line, updates the state, publishes its events,
// and signals the end of the turn when the line brought it.
func (t *Turn) onLine(line []byte, cut bool) {
	now := t.now
	if now.IsZero() {
		now = time.Now()
	}
	in := t.parser.line(line, cut, now)
	t.mu.Lock()
	t.st.lines++
	t.tr.line(line, cut)
	if t.st.finalized || in == nil {
		t.mu.Unlock()
		return
	}
	end, moved := t.apply(in, now)
	t.mu.Unlock()
	t.publish(in.events)
	if moved {
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
	if end {
		t.signalEnd()
	}
}

func (t *Turn) signalEnd() {
	select {
	case t.endCh <- struct{}{}:
	default:
	}
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
		moved = true
	}
	if in.authFailed {
		s.authLine = "the stream reports authentication_failed"
		setEnd(FinalizedByAuth)
	}
	if in.hasAnswer {
		s.answer, s.hasAnswer = in.answer, true
	}
	if r := in.result; r != nil {
		s.segments++
		s.lastResult = r
		if r.hasCost {
			s.cost = r.cost
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
		if final {
			setEnd(FinalizedByResult)
		}
	}
	return end, moved
}

// deadline returns the earliest moment a watchdog could fire. Called with
// t.mu held.
func (t *Turn) deadline() time.Time {
	var d time.Time
	earlier := func(x time.Time) {
		if d.IsZero() || x.Before(d) {
			d = x
		}
	}
	if t.spec.Timeout > 0 {
		earlier(t.start.Add(t.spec.Timeout))
	}
	if d := t.st.tl.nextStall(); !d.IsZero() {
		earlier(d)
	}
	if idle := setting.Or(t.spec.IdleTimeout, DefaultIdleTimeout); idle > 0 && t.st.tl.openCalls() == 0 && len(t.st.bg) == 0 {
		earlier(time.Unix(0, t.lastOut.Load()).Add(idle))
	}
	return d
}

// expired reports which watchdog has fired at now, if any: stall first,
// then idle, then the budget. Called with t.mu held.
func (t *Turn) expired(now time.Time) FinalizedBy {
	if c := t.st.tl.stalled(now); c != nil {
		c.Detail = t.red.String(c.Detail)
		t.st.stalled = c
		return FinalizedByStall
	}
	if idle := setting.Or(t.spec.IdleTimeout, DefaultIdleTimeout); idle > 0 && t.st.tl.openCalls() == 0 && len(t.st.bg) == 0 {
		if !now.Before(time.Unix(0, t.lastOut.Load()).Add(idle)) {
			return FinalizedByIdle
		}
	}
	if t.spec.Timeout > 0 && !now.Before(t.start.Add(t.spec.Timeout)) {
		return FinalizedByBudget
	}
	return ""
}

// run is the turn's goroutine: it waits for the end of the turn, publishes
// the result, and tears the tree down.
func (t *Turn) run(ctx context.Context) {
	defer close(t.torn)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	var interrupt <-chan time.Time
	cancelling := false
	procDone := false
	var by FinalizedBy

	startCancel := func() {
		if cancelling {
			return
		}
		cancelling = true
		ctxDone = nil
		if g := setting.Or(t.spec.InterruptGrace, DefaultInterruptGrace); g > 0 {
			if err := t.p.Signal(syscall.SIGINT); err == nil {
				interrupt = time.After(g)
				return
			}
		}
		t.p.Stop()
	}

loop:
	for {
		t.mu.Lock()
		d := t.deadline()
		t.mu.Unlock()
		if d.IsZero() {
			timer.Reset(time.Hour)
		} else {
			timer.Reset(max(time.Until(d), 0))
		}
		select {
		case <-t.endCh:
			t.mu.Lock()
			by = t.st.end
			t.mu.Unlock()
			if by != "" {
				break loop
			}
		case now := <-timer.C:
			t.mu.Lock()
			by = t.expired(now)
			t.mu.Unlock()
			if by != "" {
				break loop
			}
		case <-t.changed:
		case <-ctxDone:
			startCancel()
		case <-t.cancelCh:
			startCancel()
		case <-interrupt:
			// The agent did not finish its step in time: the core takes
			// over, and the turn ends now.
			t.p.Stop()
			by = FinalizedByCancel
			break loop
		case <-t.p.Done():
			procDone = true
			// The readers are done: deliver a last line that had no
			// newline, which may be the result.
			t.lines.Flush()
			t.errLines.Flush()
			t.mu.Lock()
			by = t.st.end
			t.mu.Unlock()
			if by == "" {
				by = FinalizedByExit
			}
			break loop
		}
	}
	if cancelling {
		by = FinalizedByCancel
	}
	t.finish(by, procDone)
	t.teardown(by, procDone)
}

// finish builds the result and ends the turn.
func (t *Turn) finish(by FinalizedBy, procDone bool) {
	end := time.Now()
	t.mu.Lock()
	t.st.finalized = true
	t.tr.flush()
	res := t.result(by, end)
	t.mu.Unlock()
	if procDone {
		t.addProcess(res, end)
	}
	t.closePublishing()
	res.EventsDropped = t.dropped.Load()
	res.Teardown = t.torn
	o := t.outcome(by, res)
	res.Status, res.ErrorType, res.Reason = classify(o)
	t.res = res
	close(t.done)
}

// teardown ends the tree: a turn the agent ended may exit by itself
// within Linger; anything else is stopped at once.
func (t *Turn) teardown(by FinalizedBy, procDone bool) {
	end := time.Now()
	if !procDone {
		linger := setting.Or(t.spec.Linger, DefaultLinger)
		if by == FinalizedByResult && linger > 0 {
			lt := time.NewTimer(linger)
			select {
			case <-t.p.Done():
			case <-lt.C:
				t.p.Stop()
			}
			lt.Stop()
		} else {
			t.p.Stop()
		}
		<-t.p.Done()
		t.lines.Flush()
		t.errLines.Flush()
	}
	final := *t.res
	t.addProcess(&final, end)
	t.tr.close()
	t.mu.Lock()
	if t.tr != nil && t.tr.truncated {
		final.TranscriptTruncated = true
	}
	t.mu.Unlock()
	t.final = &final
}

// addProcess completes a result with the core's account of the process.
func (t *Turn) addProcess(r *Result, end time.Time) {
	pr, err := t.p.Wait()
	if err != nil && t.err == nil {
		t.err = fmt.Errorf("headless: %w", err)
	}
	r.Proc = pr
	r.ExitCode = pr.ExitCode
	if pr.Signal != 0 {
		r.Signal = proc.SignalName(pr.Signal)
	}
	r.StderrTail = t.red.String(tail(pr.Stderr, 4096))
	r.Process = &ProcessInfo{
		Pid:             pr.Pid,
		ExitCode:        pr.ExitCode,
		Signal:          r.Signal,
		Containment:     pr.Containment,
		ContainmentNote: pr.ContainmentNote,
		Killed:          pr.Killed,
		Survivors:       pr.Survivors,
		TeardownMS:      ms(max(time.Since(end), 0)),
	}
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
		CostUSD:          s.cost,
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
