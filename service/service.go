package service

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/service/internal/executor"
	"github.com/corralrun/corral/service/internal/metrics"
	"github.com/corralrun/corral/service/internal/recovery"
	"github.com/corralrun/corral/service/internal/runlog"
	"github.com/corralrun/corral/store"
)

// Defaults applied to the zero values of a Config.
const (
	DefaultHeartbeat   = 2 * time.Second
	DefaultLease       = 60 * time.Second
	DefaultCancelPoll  = 200 * time.Millisecond
	DefaultMaxOutput   = 64 << 10
	DefaultMaxInput    = 256 << 10
	DefaultRedispatch  = 2 * time.Minute
	DefaultRetainCount = 100000
	DefaultSweep       = 5 * time.Minute
	DefaultMinInterval = time.Second
)

// Config configures a Service. Only Store and DataDir are required.
type Config struct {
	// Store holds the service's state; the Service does not close it.
	Store store.Store
	// DataDir holds the run logs (in DataDir/logs).
	DataDir string
	// WorkerID names this worker; empty means the host name and a hash of
	// DataDir, so that a worker restarted on the same machine with the
	// same data directory is the same worker: it recovers what its dead
	// predecessor left at once. Two live workers cannot share an id.
	WorkerID string
	// Labels are what this worker advertises: it runs the tasks of the
	// agents whose labels it all has (and of agents without labels).
	Labels []string
	// MaxRuns bounds the executions this worker runs at once; zero means
	// 256. Start logs a warning that names the limit (open files,
	// processes) this machine would hit before this many runs are live
	// (see proc.CheckCapacity): runs past it fail to start.
	MaxRuns int
	// Secrets are values masked in stored logs and output besides the
	// shapes of common credentials and agents' secret-looking variables
	// (the API token goes here).
	Secrets []string
	// Env holds KEY=VALUE entries added to every run's environment.
	// Runs start from a clean environment: a minimal base (PATH, HOME,
	// USER, LOGNAME, LANG, TZ), the variables named by PassEnv and by
	// their agent's pass_env, their agent's env, then these. Nothing else
	// of the service's environment reaches them.
	Env []string
	// PassEnv names variables of the service's environment every run
	// receives. CORRAL_TOKEN and CORRAL_DB are refused, and a variable
	// holding one of Secrets is never passed.
	PassEnv []string
	// RunAs, if set, is the user runs start as when their agent names
	// none; no run then starts as root or as the service's own user.
	// Switching users needs the privilege to (root). Empty means runs
	// share the service's user, unless their agent names another.
	RunAs string
	// Guard says whether runs are kept from the service's secrets by the
	// task guard (see GuardMode): the zero value guards them wherever this
	// machine can.
	Guard GuardMode
	// Hide lists files and directories besides DataDir that no run may
	// read (the service's TLS key, a database password file): a guarded
	// run does not see them, a sandboxed one has them denied.
	Hide []string
	// Lease is how long a worker that stopped renewing its lease (killed,
	// cut from the database, frozen) is trusted: past it, other workers
	// record its runs as interrupted and free their slots. A worker that
	// has not renewed its own lease for Lease minus two heartbeats stops
	// its runs itself (fencing), so no run goes on where the fleet
	// believes it dead. Zero means 60 s. A dead worker on this machine is
	// recognised at once by its process being gone.
	Lease time.Duration
	// Heartbeat is how often this worker renews its lease and looks for
	// dead workers; zero means 2 s, or Lease/4 when that is shorter.
	Heartbeat time.Duration
	// ShutdownTimeout is how long Close lets runs in flight finish by
	// themselves (no new work is taken meanwhile) before it interrupts
	// them; zero interrupts them at once.
	ShutdownTimeout time.Duration
	// CancelPoll is how often this worker looks for cancellations
	// requested through other workers; zero means 200 ms.
	CancelPoll time.Duration
	// MaxLogBytes bounds each run's log file; zero means 64 MiB.
	MaxLogBytes int64
	// RetainFor and RetainCount bound the finished executions kept, with
	// their logs: those created more than RetainFor ago are deleted (zero
	// or negative: none for their age), and beyond the newest RetainCount
	// (zero means 100,000; negative: no count bound). Queued and running
	// executions are never deleted. Every worker sweeps every
	// SweepInterval (zero means 5 minutes); each deletes the logs on its
	// own disk.
	RetainFor     time.Duration
	RetainCount   int
	SweepInterval time.Duration
	// MinScheduleInterval is the shortest time allowed between two fires
	// of a schedule; zero means one second.
	MinScheduleInterval time.Duration
	// Webhooks receive the events of every agent's executions, besides the
	// agents' own (corral serve --webhook). WebhookTimeout bounds each
	// delivery (zero: 10 s); a delivery the receiver does not accept is
	// retried with backoff from WebhookBackoff (zero: 1 s; at most 5 min
	// apart) until WebhookRetryFor has passed since its event (zero: 24 h).
	Webhooks        []corral.Webhook
	WebhookTimeout  time.Duration
	WebhookBackoff  time.Duration
	WebhookRetryFor time.Duration
	// Prices prices the models of headless runs whose agent reports no
	// cost (Codex), for their agents' cost ceilings and budgets; nil means
	// the table shipped with corral (headless.DefaultPrices).
	Prices *headless.Prices
	// Trace turns the service's spans on (docs/observability.md): each
	// submission, each execution with its wait in the queue, and below
	// it the run's turn (its tool calls, its teardown) or process tree,
	// from the provider proc.SetTracerProvider installed, else from that
	// of the span the context carries. An execution's span starts under
	// the trace context kept with it, which names no provider: a program
	// that installs none traces the submissions it makes under its own
	// spans, not their runs. A submission's span is a child of its context's span (the API takes
	// a submitter's traceparent header); its trace context is kept with
	// the execution and every attempt after it, so that the run's
	// attempts are one trace on whichever worker runs them; each fire
	// of a schedule starts a trace of its own. The processes of a run
	// get TRACEPARENT naming their span. Off, the service starts no span
	// and ignores a submitter's trace context, and a run's environment
	// is as without telemetry.
	Trace bool
	// TraceContent lets the turn's spans record prompts' answers and tool
	// inputs, through the run's redactor (tracing.WithContent); off, they
	// record none.
	TraceContent bool
	// FlushWindow is, for a traced headless run, how long the agent may
	// take to exit by itself after its turn (headless.Spec.FlushWindow):
	// zero means headless.DefaultFlushWindow, negative none.
	FlushWindow time.Duration
	// Now is the clock of the scheduler; nil means time.Now.
	Now func() time.Time
	// Logger receives the service's own log; nil discards it.
	Logger *slog.Logger
	// OnSlotReleased, if set, is called after a run's terminal state (and
	// slot release) committed, with the time since its process tree was
	// gone. It is for monitoring and benchmarks; it must not block.
	OnSlotReleased func(executionID string, sinceTreeGone time.Duration)
}

// Service is one worker of the task service. Its methods are safe for
// concurrent use.
type Service struct {
	cfg     Config
	st      store.Store
	id      string
	ident   recovery.Identity
	logDir  string
	runDir  string
	log     *slog.Logger
	hub     *runlog.Hub
	metrics *metrics.Registry
	execs   map[corral.AgentKind]executor.Executor

	mu          sync.Mutex
	runs        map[string]*localRun
	started     bool
	closed      bool
	cancel      context.CancelFunc
	cancelSched context.CancelFunc
	loops       sync.WaitGroup
	sched       sync.WaitGroup
	wakeSch     chan struct{}
	lastRenew   time.Time // when the lease was last renewed (local clock)
	guardOn     bool      // runs are guarded (see Guarded)
	unguarded   string    // why not, when they are not
	leaseLost   bool      // the lease could not be renewed in time
	hbErr       error     // why the last heartbeat failed, nil if it did not
	// owed holds the runs that ended but whose end the store refused,
	// with its last refusal; giveUp is closed when Close must stop
	// trying.
	owed       map[string]error
	giveUp     chan struct{}
	giveUpOnce sync.Once
	chg        changes
}

// localRun is a run of this worker. stop asks for a graceful stop (a
// cancellation); interrupt ends it at once as interrupted, for the reason
// its cause gives (executor.Interrupt).
type localRun struct {
	stop      chan struct{}
	stopOnce  sync.Once
	interrupt context.CancelCauseFunc
}

func (r *localRun) Stop() { r.stopOnce.Do(func() { close(r.stop) }) }

// Fence interrupts the run because worker lost its lease.
func (r *localRun) Fence(worker string) {
	r.interrupt(executor.Interrupt(fmt.Sprintf("this worker (%s) could not renew its lease in time, so it stopped the run: the fleet records the runs of a worker it cannot reach as interrupted", worker)))
}

// New returns a Service on cfg. It does nothing until Start.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("service: no store given")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("service: no data directory given")
	}
	logDir := filepath.Join(cfg.DataDir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("service: create log directory: %w", err)
	}
	runDir := filepath.Join(cfg.DataDir, "runs")
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return nil, fmt.Errorf("service: create run directory: %w", err)
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = min(DefaultHeartbeat, cfg.Lease/4)
	}
	if cfg.Heartbeat >= cfg.Lease/2 {
		return nil, fmt.Errorf("service: heartbeat %v must be under half the lease %v", cfg.Heartbeat, cfg.Lease)
	}
	labels, err := corral.NormalizeLabels(cfg.Labels)
	if err != nil {
		return nil, fmt.Errorf("service: worker labels: %w", err)
	}
	cfg.Labels = labels
	if cfg.CancelPoll <= 0 {
		cfg.CancelPoll = DefaultCancelPoll
	}
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		if err := corral.ValidWebhookURL(w.URL); err != nil || w.Secret == "" {
			return nil, fmt.Errorf("service: webhook %q: want an http(s) URL and a secret", w.URL)
		}
	}
	cfg.WebhookTimeout = cmp.Or(cfg.WebhookTimeout, DefaultWebhookTimeout)
	cfg.WebhookBackoff = cmp.Or(cfg.WebhookBackoff, DefaultWebhookBackoff)
	cfg.WebhookRetryFor = cmp.Or(cfg.WebhookRetryFor, DefaultWebhookRetryFor)
	cfg.Store.SetDefaultWebhooks(cfg.Webhooks)
	cfg.RetainCount = setting.Or(cfg.RetainCount, DefaultRetainCount)
	cfg.RetainFor = max(cfg.RetainFor, 0)
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = DefaultSweep
	}
	if cfg.MinScheduleInterval <= 0 {
		cfg.MinScheduleInterval = DefaultMinInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, n := range cfg.PassEnv {
		if err := executor.CheckPassEnv(n); err != nil {
			return nil, fmt.Errorf("service: pass env: %w", err)
		}
	}
	if cfg.RunAs != "" {
		if err := corral.ValidUser(cfg.RunAs); err != nil {
			return nil, fmt.Errorf("service: run as: %w", err)
		}
	}
	guardOn, unguarded, err := guardFor(&cfg)
	if err != nil {
		return nil, err
	}
	policy := &executor.Policy{RunAs: cfg.RunAs, PassEnv: cfg.PassEnv, Secrets: cfg.Secrets, DataDir: cfg.DataDir,
		Hide: cfg.Hide, Guard: guardOn, Unguarded: unguarded, Prices: cfg.Prices}
	ident := recovery.Self()
	id := cfg.WorkerID
	if id == "" {
		id = DefaultWorkerID(cfg.DataDir)
	}
	s := &Service{
		cfg:     cfg,
		st:      cfg.Store,
		id:      id,
		ident:   ident,
		logDir:  logDir,
		runDir:  runDir,
		log:     cfg.Logger,
		hub:     runlog.NewHub(),
		metrics: newMetrics(),
		execs:   map[corral.AgentKind]executor.Executor{corral.KindShell: executor.Shell{Policy: policy}, corral.KindHeadless: executor.Headless{Policy: policy}},
		runs:    map[string]*localRun{},
		wakeSch: make(chan struct{}, 1),
		owed:    map[string]error{},
		giveUp:  make(chan struct{}),

		guardOn:   guardOn,
		unguarded: unguarded,
	}
	s.chg.ch = make(chan struct{})
	return s, nil
}

// DefaultWorkerID is the id of a worker whose Config.WorkerID is empty:
// the host name and a hash of its data directory's absolute path.
func DefaultWorkerID(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	h := sha256.Sum256([]byte(abs))
	return fmt.Sprintf("%s-%s", recovery.Self().Host, hex.EncodeToString(h[:4]))
}

// WorkerID returns this worker's id, as recorded in the executions it owns.
func (s *Service) WorkerID() string { return s.id }

// Start registers the worker, recovers what dead workers left (killing
// their process trees, recording their runs as interrupted, freeing their
// slots), and starts running executions and schedules. ctx bounds Start
// itself; Close stops what Start started.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("service: already started or closed")
	}
	s.started = true
	s.mu.Unlock()
	if err := s.takeOverPredecessor(ctx); err != nil {
		return err
	}
	now := time.Now().UTC()
	if err := s.st.RegisterWorker(ctx, s.worker(now)); err != nil {
		return fmt.Errorf("service: register worker: %w", err)
	}
	s.mu.Lock()
	s.lastRenew = time.Now()
	s.mu.Unlock()
	if err := s.recoverDead(ctx, true); err != nil {
		return fmt.Errorf("service: recovery: %w", err)
	}
	s.reclaimOrphans(ctx)
	s.checkCapacity()
	// The engine lives until Close stops it, not as long as ctx: a
	// cancelled ctx (the signal that asks for a graceful stop) would be
	// the engine's hard stop, interrupting every run at once.
	ectx := context.WithoutCancel(ctx)
	if mutant.NoDrain {
		ectx = ctx
	}
	if err := s.st.Dispatcher().Start(ectx, store.DispatchConfig{WorkerID: s.id, MaxRuns: s.cfg.MaxRuns, Labels: s.cfg.Labels,
		LabelSets: s.labelSets, Run: s.runExecution, Redispatch: s.st.Redispatch}); err != nil {
		return fmt.Errorf("service: start job engine: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	sctx, cancelSched := context.WithCancel(lctx)
	s.mu.Lock()
	s.cancel, s.cancelSched = cancel, cancelSched
	s.mu.Unlock()
	s.loops.Add(4)
	go s.deliverLoop(lctx)
	go s.every(lctx, s.cfg.Heartbeat, s.heartbeat)
	go s.every(lctx, s.cfg.CancelPoll, s.pollCancels)
	go s.every(lctx, s.cfg.SweepInterval, s.sweep)
	if w, ok := s.st.(store.CancelWatcher); ok {
		s.loops.Add(1)
		go s.watchCancels(lctx, w)
	}
	s.sched.Add(1)
	go s.scheduleLoop(sctx)
	return nil
}

func (s *Service) worker(now time.Time) *store.Worker {
	return &store.Worker{ID: s.id, Host: s.ident.Host, BootID: s.ident.BootID, Pid: s.ident.Pid, PidStart: s.ident.PidStart, Labels: s.cfg.Labels, StartedAt: now, Heartbeat: now}
}

// takeOverPredecessor recovers the runs of an earlier worker with this
// worker's id (the same --worker-id, or the same host and data
// directory) if it is dead, and refuses to start if it is alive.
func (s *Service) takeOverPredecessor(ctx context.Context) error {
	workers, err := s.st.Workers(ctx)
	if err != nil {
		return fmt.Errorf("service: list workers: %w", err)
	}
	for _, w := range workers {
		if w.ID != s.id {
			continue
		}
		if w.Pid == s.ident.Pid && w.PidStart == s.ident.PidStart && s.ident.SameMachine(w) {
			return nil // this very process registered it (Close did not run)
		}
		if !s.ident.Dead(w, time.Now().UTC(), s.cfg.Lease) {
			return fmt.Errorf("service: worker id %s is held by a live worker (pid %d on %s, lease renewed %s ago): give each worker its own id (--worker-id) or data directory, or wait %s for its lease to expire if it is gone",
				s.id, w.Pid, w.Host, time.Since(w.Heartbeat).Round(time.Second), s.cfg.Lease)
		}
		s.log.Info("recovering the runs of this worker's dead predecessor", "worker", w.ID)
		return s.recoverWorker(ctx, w)
	}
	return nil
}

// Close shuts the worker down gracefully: it stops taking work at once
// (no new dispatches, no schedule fires, Submit answers ErrClosed, Ready
// reports it), lets the runs in flight finish by themselves for up to
// Config.ShutdownTimeout while it keeps renewing its lease and honouring
// cancellations, then interrupts the runs still going (see Interrupt:
// their trees are torn down, headless agents get SIGINT first, and they
// are recorded as interrupted with a reason that names the shutdown,
// their slots freed), and forgets the worker. Queued executions stay
// queued for the other workers or the next start. The store stays open.
// ctx bounds the whole of Close: runs whose end the store still refuses
// when it is done stay recorded as running, and the worker is not
// forgotten, so that the next start on this machine (or another worker,
// once the lease expires) recovers them; Close then says so in its error.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancel, cancelSched := s.cancel, s.cancelSched
	s.mu.Unlock()
	if cancelSched != nil {
		cancelSched()
	}
	s.sched.Wait()
	stop := context.AfterFunc(ctx, func() { s.giveUpOnce.Do(func() { close(s.giveUp) }) })
	defer stop()
	drained := time.AfterFunc(s.cfg.ShutdownTimeout, func() {
		s.Interrupt(fmt.Sprintf("the worker (%s) shut down, and the run did not finish within its shutdown timeout (%v)", s.id, s.cfg.ShutdownTimeout))
	})
	err := s.st.Dispatcher().Stop(ctx)
	drained.Stop()
	if cancel != nil {
		cancel()
	}
	s.loops.Wait()
	if n := s.owedCount(); n > 0 {
		return errors.Join(err, fmt.Errorf("service: the end of %d runs could not be recorded (%v); this worker's record is kept so that the next start or another worker recovers them", n, s.unrecorded()))
	}
	if derr := s.st.DeleteWorker(ctx, s.id); err == nil {
		err = derr
	}
	return err
}

// Interrupt stops every run of this worker at once, as Close does when
// the shutdown timeout has passed: each is torn down (a headless agent
// gets SIGINT first) and recorded as interrupted, for reason. Runs that
// start later are not affected. corral serve calls it on a second
// SIGTERM.
func (s *Service) Interrupt(reason string) {
	s.mu.Lock()
	runs := make([]*localRun, 0, len(s.runs))
	for _, r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	cause := executor.Interrupt(reason)
	for _, r := range runs {
		r.interrupt(cause)
	}
}

// Ready reports whether this worker can take work: started and not
// closing, its lease renewed in time, the database answering and taking
// its writes (the last heartbeat went through, no run's end waits to be
// recorded).
func (s *Service) Ready(ctx context.Context) error {
	s.mu.Lock()
	started, closed, lost, hbErr := s.started, s.closed, s.leaseLost, s.hbErr
	s.mu.Unlock()
	switch {
	case !started:
		return errors.New("not started")
	case closed:
		return ErrClosed
	case lost:
		return errors.New("lease lost: the database has not been reachable for too long")
	}
	if err := s.unrecorded(); err != nil {
		return err
	}
	if hbErr != nil {
		return fmt.Errorf("database not writable: %w", hbErr)
	}
	if err := s.st.Ping(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	return nil
}

// owe records that the end of run id could not be written (err).
func (s *Service) owe(id string, err error) {
	s.mu.Lock()
	s.owed[id] = err
	s.mu.Unlock()
}

// paid records that the end of run id is written.
func (s *Service) paid(id string) {
	s.mu.Lock()
	delete(s.owed, id)
	s.mu.Unlock()
}

func (s *Service) owedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owed)
}

// unrecorded says why this worker takes no new work: the ends of runs
// that the store refused to record. Nil when there are none.
func (s *Service) unrecorded() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.owed {
		return fmt.Errorf("the end of %d runs is not recorded yet (retrying): %w", len(s.owed), err)
	}
	return nil
}

func (s *Service) gaveUp() bool {
	select {
	case <-s.giveUp:
		return true
	default:
		return false
	}
}

func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// every calls f once a period until ctx ends, as one of s.loops.
func (s *Service) every(ctx context.Context, period time.Duration, f func(context.Context)) {
	defer s.loops.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f(ctx)
	}
}

// heartbeat renews this worker's leases, recovers the runs of dead
// workers and picks up agents' new labels.
func (s *Service) heartbeat(ctx context.Context) {
	s.renew(ctx)
	if err := s.recoverDead(ctx, false); err != nil && ctx.Err() == nil {
		s.log.Warn("recovery failed", "err", err)
	}
	if err := s.st.Dispatcher().Refresh(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("could not look for new agent labels", "err", err)
	}
}

// fenceAfter is how long this worker keeps its runs going without a
// renewed lease: two heartbeats before the others may declare it dead.
func (s *Service) fenceAfter() time.Duration {
	return max(s.cfg.Lease-2*s.cfg.Heartbeat, s.cfg.Lease/2)
}

// renew renews the lease. A worker that finds itself declared dead, or
// that could not renew for fenceAfter, stops every run it has (the fleet
// has recorded them, or is about to record them, as interrupted) before
// it registers again.
func (s *Service) renew(ctx context.Context) {
	hctx, cancel := context.WithTimeout(ctx, s.cfg.Heartbeat)
	defer cancel()
	attempt := time.Now()
	err := s.st.Heartbeat(hctx, s.id, attempt.UTC())
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	since := time.Since(s.lastRenew)
	s.mu.Unlock()
	s.mu.Lock()
	s.hbErr = err
	s.mu.Unlock()
	switch {
	case err == nil:
		s.mu.Lock()
		s.lastRenew, s.leaseLost = attempt, false
		s.mu.Unlock()
	case errors.Is(err, store.ErrNotFound):
		s.log.Warn("this worker was declared dead by another; stopping its runs and registering again", "worker", s.id)
		s.fence()
		now := time.Now().UTC()
		if err := s.st.RegisterWorker(hctx, s.worker(now)); err == nil {
			s.mu.Lock()
			s.lastRenew, s.leaseLost, s.hbErr = now, false, nil
			s.mu.Unlock()
		}
	case since > s.fenceAfter():
		s.log.Warn("lease not renewed in time; stopping this worker's runs", "worker", s.id, "since", since.Round(time.Millisecond), "err", err)
		s.fence()
	default:
		s.log.Warn("heartbeat failed", "err", err)
	}
}

// fence interrupts every run of this worker.
func (s *Service) fence() {
	s.mu.Lock()
	s.leaseLost = true
	runs := make([]*localRun, 0, len(s.runs))
	for _, r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.Fence(s.id)
	}
}

// pollCancels stops the local runs whose cancellation was requested, in
// case a notification was missed.
func (s *Service) pollCancels(ctx context.Context) {
	s.mu.Lock()
	n := len(s.runs)
	s.mu.Unlock()
	if n == 0 {
		return
	}
	ids, err := s.st.CancelRequested(ctx, s.id)
	if err != nil {
		return
	}
	for _, id := range ids {
		s.stopLocal(id)
	}
}

// watchCancels receives cancellation requests pushed by the database, so
// the owner need not wait for its next poll; it listens again after a
// failure.
func (s *Service) watchCancels(ctx context.Context, w store.CancelWatcher) {
	defer s.loops.Done()
	for ctx.Err() == nil {
		err := w.WatchCancels(ctx, s.id, func(id string) { s.stopLocal(id) })
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("cancel notifications interrupted; polling meanwhile", "err", err)
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// stopLocal stops the run of id if this worker runs it.
func (s *Service) stopLocal(id string) bool {
	s.mu.Lock()
	r := s.runs[id]
	s.mu.Unlock()
	if r != nil {
		r.Stop()
	}
	return r != nil
}
