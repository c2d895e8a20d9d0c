package headless

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/internal/mutant"
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
// the turn plus Spec.Linger (for a turn the agent ended itself; for a
// traced turn, Spec.FlushWindow when it is longer) plus the core's grace
// and drain bounds.
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
	read   threadMark // the reader's thread when it read the latest bytes
	// Owned by the stderr reader until teardown.
	errLines capture.Lines

	mu sync.Mutex
	st state
	// The line that ended the turn: read, and signalled (under mu); and
	// the turn's goroutine asleep (its own).
	endRead, endSignal, slept threadMark

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

	trace turnTrace // the turn's spans (trace.go)
}

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
		Credential:  spec.Credential,
		Sandbox:     spec.Sandbox,
		Guard:       spec.Guard,
		Label:       label,
	}
	now := time.Now()
	t.lastOut.Store(now.UnixNano())
	t.trace = startTurn(ctx, spec)
	p, err := proc.Start(t.trace.procContext(), ps)
	if err != nil {
		t.trace.startFailed(err)
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
	t.st.tl = Timeline{StallLimit: spec.StallLimit, Yield: t.commandYield}
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
// tree. The turn ends (Wait returns) when the agent reports its result,
// has exited or the interval is over, with status cancelled; an agent that
// reported may still exit by itself until the interval is over (Close and
// TornDown wait for that). Cancel returns at once; after the end of the
// turn it does nothing.
func (t *Turn) Cancel() { t.cancel.Do(func() { close(t.cancelCh) }) }

type stdoutSink struct{ t *Turn }

func (s stdoutSink) Write(p []byte) (int, error) {
	t := s.t
	t.read = markThread()
	t.now = t.read.at
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
	// The line may end the turn before the Write that carried it returns:
	// what was cut of the lines before it (in the same read) counts now.
	t.st.linesCut, t.st.bytesCut = t.lines.Cut, t.lines.Skipped
	t.tr.line(line, cut)
	if t.st.finalized || in == nil {
		t.mu.Unlock()
		return
	}
	before, ending := t.st.spent, t.st.end != ""
	end, moved := t.apply(in, now)
	spent := t.st.spent
	if end && !t.now.IsZero() {
		t.endRead = t.read
	}
	t.mu.Unlock()
	// Once the turn is ending, what the lines still in the pipe report is
	// in its result, not given to OnSpend: a ceiling it enforces is
	// crossed by one event at most.
	if t.spec.OnSpend != nil && !ending && spent != nil && !spent.same(before) {
		if err := t.spec.OnSpend(*spent); err != nil && !end {
			t.mu.Lock()
			if t.st.end == "" && !t.st.finalized {
				t.st.spend.why, t.st.end, end = err.Error(), FinalizedByMaxBudget, true
			}
			t.mu.Unlock()
		}
	}
	t.publish(in.events)
	if moved {
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
	if end {
		m := markThread()
		t.mu.Lock()
		t.endSignal = m
		t.mu.Unlock()
		t.signalEnd()
	}
}

func (t *Turn) signalEnd() {
	select {
	case t.endCh <- struct{}{}:
	default:
	}
}

// run is the turn's goroutine: it waits for the end of the turn, publishes
// the result, and tears the tree down.
func (t *Turn) run(ctx context.Context) {
	defer close(t.torn)
	// One thread until the turn is finalized, so that the time it waits
	// for a CPU can be told from corral's own (see Finalization).
	runtime.LockOSThread()
	locked := true
	defer func() {
		if locked {
			runtime.UnlockOSThread()
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	var interrupt <-chan time.Time
	var interruptEnd time.Time // when a cancel's interrupt grace ends
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
				interruptEnd = time.Now().Add(g)
				interrupt = time.After(g)
				return
			}
		}
		t.p.Stop()
	}

loop:
	for {
		t.mu.Lock()
		d := t.deadline(time.Now())
		t.mu.Unlock()
		if d.IsZero() {
			timer.Reset(time.Hour)
		} else {
			timer.Reset(max(time.Until(d), 0))
		}
		t.slept = markThread()
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
	// An agent that answered the interrupt with its result may still exit
	// by itself within the interrupt grace (saving its session on the
	// way out, as the grace promises), not be stopped at its result.
	var exitBy time.Time
	if cancelling && by == FinalizedByResult && !mutant.CancelNoExitGrace {
		exitBy = interruptEnd
	}
	if cancelling {
		by = FinalizedByCancel
	}
	t.finish(by, procDone)
	runtime.UnlockOSThread()
	locked = false
	t.teardown(by, procDone, exitBy)
}

// finish builds the result and ends the turn.
func (t *Turn) finish(by FinalizedBy, procDone bool) {
	if mutant.FinalizeLate && by == FinalizedByResult {
		time.Sleep(time.Second)
	}
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
	resetOf(res, end)
	t.mu.Lock()
	if by == FinalizedByResult && !t.endRead.at.IsZero() {
		res.Finalize = finalization(t.endRead, t.endSignal, t.slept)
	}
	t.mu.Unlock()
	t.trace.endTurn(res, end)
	t.res = res
	close(t.done)
}

// teardown ends the tree: a turn the agent ended may exit by itself
// within Linger, a cancelled one whose agent answered with its result
// until exitBy (the end of the interrupt grace); anything else is stopped
// at once.
func (t *Turn) teardown(by FinalizedBy, procDone bool, exitBy time.Time) {
	end := time.Now()
	linger := t.lingerFor(by)
	if !exitBy.IsZero() {
		linger = max(time.Until(exitBy), 0)
	}
	t.trace.beginTeardown(linger)
	byItself := procDone
	if !procDone {
		if linger > 0 {
			lt := time.NewTimer(linger)
			select {
			case <-t.p.Done():
				byItself = true
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
	t.trace.endTeardown(byItself, final.Proc)
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
		Sandbox:         pr.Sandbox,
		TeardownMS:      ms(max(time.Since(end), 0)),
	}
}
