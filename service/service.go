package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/corralrun/corral/service/internal/executor"
	"github.com/corralrun/corral/service/internal/metrics"
	"github.com/corralrun/corral/service/internal/recovery"
	"github.com/corralrun/corral/service/internal/runlog"
	"github.com/corralrun/corral/store"
)

// Defaults applied to the zero values of a Config.
const (
	DefaultHeartbeat   = 2 * time.Second
	DefaultLease       = 20 * time.Second
	DefaultCancelPoll  = 200 * time.Millisecond
	DefaultMaxOutput   = 64 << 10
	DefaultMaxInput    = 256 << 10
	DefaultRedispatch  = 2 * time.Minute
	finishRetryTimeout = 30 * time.Second
)

// Config configures a Service. Only Store and DataDir are required.
type Config struct {
	// Store holds the service's state; the Service does not close it.
	Store store.Store
	// DataDir holds the run logs (in DataDir/logs).
	DataDir string
	// WorkerID names this worker; empty means host-pid-random.
	WorkerID string
	// MaxRuns bounds the executions this worker runs at once; zero means
	// 256.
	MaxRuns int
	// Secrets are values masked in stored logs and output besides the
	// shapes of common credentials and agents' secret-looking variables
	// (the API token goes here).
	Secrets []string
	// Env holds KEY=VALUE entries added to every run's environment.
	Env []string
	// Heartbeat is how often this worker renews its lease and looks for
	// dead workers; Lease is how long a silent worker elsewhere is
	// trusted. Zero means 2 s and 20 s. A dead worker on this machine is
	// recognised at once by its process being gone.
	Heartbeat, Lease time.Duration
	// CancelPoll is how often this worker looks for cancellations
	// requested through other workers; zero means 200 ms.
	CancelPoll time.Duration
	// MaxLogBytes bounds each run's log file; zero means 64 MiB.
	MaxLogBytes int64
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
	log     *slog.Logger
	hub     *runlog.Hub
	metrics *metrics.Registry
	execs   map[store.AgentKind]executor.Executor

	mu      sync.Mutex
	runs    map[string]*localRun
	started bool
	closed  bool
	cancel  context.CancelFunc
	loops   sync.WaitGroup
	wakeSch chan struct{}
}

type localRun struct {
	stop     chan struct{}
	stopOnce sync.Once
}

func (r *localRun) Stop() { r.stopOnce.Do(func() { close(r.stop) }) }

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
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.CancelPoll <= 0 {
		cfg.CancelPoll = DefaultCancelPoll
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ident := recovery.Self()
	id := cfg.WorkerID
	if id == "" {
		var b [3]byte
		rand.Read(b[:])
		id = fmt.Sprintf("%s-%d-%s", ident.Host, ident.Pid, hex.EncodeToString(b[:]))
	}
	s := &Service{
		cfg:     cfg,
		st:      cfg.Store,
		id:      id,
		ident:   ident,
		logDir:  logDir,
		log:     cfg.Logger,
		hub:     runlog.NewHub(),
		metrics: newMetrics(),
		execs:   map[store.AgentKind]executor.Executor{store.KindShell: executor.Shell{}, store.KindHeadless: executor.Headless{}},
		runs:    map[string]*localRun{},
		wakeSch: make(chan struct{}, 1),
	}
	return s, nil
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
	now := time.Now().UTC()
	w := &store.Worker{ID: s.id, Host: s.ident.Host, BootID: s.ident.BootID, Pid: s.ident.Pid, PidStart: s.ident.PidStart, StartedAt: now, Heartbeat: now}
	if err := s.st.RegisterWorker(ctx, w); err != nil {
		return fmt.Errorf("service: register worker: %w", err)
	}
	if err := s.recoverDead(ctx, true); err != nil {
		return fmt.Errorf("service: recovery: %w", err)
	}
	if err := s.st.StartEngine(ctx, store.EngineConfig{WorkerID: s.id, MaxRuns: s.cfg.MaxRuns, Run: s.runExecution}); err != nil {
		return fmt.Errorf("service: start job engine: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	s.loops.Add(3)
	go s.heartbeatLoop(lctx)
	go s.cancelLoop(lctx)
	go s.scheduleLoop(lctx)
	return nil
}

// Close stops the scheduler and the loops, stops the runs in flight
// (their trees are torn down and they are recorded as interrupted, their
// slots freed), and forgets the worker. Queued executions stay queued for
// the next worker. The store stays open.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.loops.Wait()
	err := s.st.StopEngine(ctx)
	if derr := s.st.DeleteWorker(ctx, s.id); err == nil {
		err = derr
	}
	return err
}

func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Service) heartbeatLoop(ctx context.Context) {
	defer s.loops.Done()
	t := time.NewTicker(s.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now().UTC()
		if err := s.st.Heartbeat(ctx, s.id, now); errors.Is(err, store.ErrNotFound) {
			// Another worker declared this one dead; come back.
			s.log.Warn("worker lease was lost; registering again", "worker", s.id)
			s.st.RegisterWorker(ctx, &store.Worker{ID: s.id, Host: s.ident.Host, BootID: s.ident.BootID, Pid: s.ident.Pid, PidStart: s.ident.PidStart, StartedAt: now, Heartbeat: now})
		} else if err != nil && ctx.Err() == nil {
			s.log.Warn("heartbeat failed", "err", err)
		}
		if err := s.recoverDead(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Warn("recovery failed", "err", err)
		}
	}
}

func (s *Service) cancelLoop(ctx context.Context) {
	defer s.loops.Done()
	t := time.NewTicker(s.cfg.CancelPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		n := len(s.runs)
		s.mu.Unlock()
		if n == 0 {
			continue
		}
		ids, err := s.st.CancelRequested(ctx, s.id)
		if err != nil {
			continue
		}
		for _, id := range ids {
			s.stopLocal(id)
		}
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
