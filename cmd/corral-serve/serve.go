package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // schedules name IANA zones; a fresh machine may lack the database

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/httpguard"
	"github.com/corralrun/corral/internal/lockout"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/sqlite"
	"github.com/corralrun/corral/web"
)

func init() {
	register("serve", "run the task service: agents, slots, schedules, HTTP API, web UI", serveMain)
}

const serveUsage = `Usage: corral serve [--addr HOST:PORT] [--data DIR] [--db postgres://…] [--run-as USER]

Runs the task service: named agents run tasks (shell command lines or
headless agent prompts) on demand or on a schedule, never more at once than
their capacity, every run recorded in an embedded SQLite database under
DIR, its output logged, nothing left running when the service stops.

The HTTP API (docs/api.md) listens on 127.0.0.1:7070 by default, with
the web UI (docs/web.md) at / of the same address: open the printed URL
in a browser and log in with the token to watch and steer runs. Every
API route but /healthz needs "Authorization: Bearer TOKEN": the token is
CORRAL_TOKEN if set, else the file DIR/token, created with mode 0600 on
first start and printed once. A non-loopback address is refused without a
token. The client commands (agents, submit, ps, logs, cancel, schedules)
find the address and token the same way.

Tasks never see the service's secrets. Each starts from PATH, HOME,
USER, LOGNAME, LANG and TZ, plus the variables --pass-env names (and its
agent's pass_env), plus its agent's env. At start the service takes
CORRAL_TOKEN and CORRAL_DB out of its environment block, and a --db
password out of its command line (/proc/PID/environ, ps). The task guard
(--task-guard auto, the default, wherever the kernel allows it) runs each
task in pid, mount and IPC namespaces of its own: the service's processes
(their environment, memory, descriptors) are out of its sight and reach,
the data directory, the TLS key and a PostgreSQL password file are
hidden, no device but the harmless ones is usable, the kernel's
interfaces are read-only, and a root task keeps only the capabilities of
a container's default set less CAP_MKNOD and CAP_NET_RAW. --task-guard on
refuses to start without it; off runs tasks unguarded. Started as root,
the service runs tasks as --run-as USER (or an agent's run_as), never as
root or as itself, when given; otherwise as root, guarded, which keeps
them from the secrets but not from changing the machine: see the
security section of docs/service.md.

Browsers: every request must name the service by a loopback name, an IP
address or a --public-host; the API takes state changes only as JSON from
no other origin, so no web page can act on it, with or without a token.
A non-loopback --addr needs --tls-cert and --tls-key (or a reverse proxy
that terminates TLS, trusted with --trusted-proxy, and
--insecure-plain-http).

After a crash (even kill -9), the next start kills what the previous
instance left running, records its runs as interrupted with what they had
logged, frees their slots, and resumes the queue.

Many workers, one fleet: with --db postgres://USER@HOST/DB (or
CORRAL_DB) every worker shares one PostgreSQL database: slots hold across
the fleet, each schedule fire is taken once, a cancel reaches the worker
that runs the task, and a worker that dies or loses the database for
--lease has its runs recorded as interrupted by the others (it stops them
itself when it cannot renew its lease). --labels pins agents that require
labels to the workers that advertise them. --db-max-conns bounds every
connection a worker opens to the database (named corral/WORKER_ID in
pg_stat_activity); a worker refuses to start when the server would not
take them. See docs/deploy.md.

SIGINT or SIGTERM stops the service gracefully: it takes no new work
(/readyz answers 503), lets runs in flight finish for up to
--shutdown-timeout, then stops the rest and records them as interrupted;
queued tasks wait for another worker or the next start.

Environment: CORRAL_DATA (default data directory), CORRAL_DB (database
URL), CORRAL_TOKEN.

Flags:
`

// serveFlags are the flags of corral serve.
type serveFlags struct {
	addr, data, dbURL, workerID, labels, retain, runAs *string
	taskGuard                                          *string
	tlsCert, tlsKey, prices                            *string
	maxRuns, maxAgents, maxSchedules, dbMaxConns       *int
	lease, shutdownTimeout                             *time.Duration
	noAuth, plainHTTP, verbose                         *bool
	passEnv, publicHosts, proxies                      stringList
	hooks                                              *webhookFlags
	otel                                               *serveTelemetry
}

func addServeFlags(fs *flag.FlagSet) *serveFlags {
	f := &serveFlags{}
	f.addr = fs.String("addr", "127.0.0.1:7070", "listen on `HOST:PORT` (port 0 picks a free one)")
	f.data = fs.String("data", defaultDataDir(), "data `DIR`: database, run logs, token")
	f.maxRuns = fs.Int("max-runs", 256, "most executions this service runs at once, over all agents")
	f.dbURL = fs.String("db", "", "shared PostgreSQL database `URL` (postgres://USER@HOST/DB?sslmode=…; default $CORRAL_DB); empty means SQLite in the data directory")
	f.dbMaxConns = fs.Int("db-max-conns", 0, "most `N` connections this worker opens to the PostgreSQL --db, River's included (0: the URL's pool_max_conns, else 4 + max-runs/4, at most 20)")
	f.workerID = fs.String("worker-id", "", "this worker's `ID` in the fleet (default: host name and a hash of the data directory)")
	f.labels = fs.String("labels", "", "comma-separated `LABELS` this worker advertises; it runs the agents requiring only labels it has")
	f.lease = fs.Duration("lease", service.DefaultLease, "how long a silent worker is trusted before the fleet interrupts its runs")
	f.shutdownTimeout = fs.Duration("shutdown-timeout", 30*time.Second, "on SIGTERM, how long runs in flight may finish before they are interrupted")
	f.noAuth = fs.Bool("insecure-no-auth", false, "serve without a token (loopback addresses only)")
	f.retain = fs.String("retain-executions", "", retentionHelp)
	f.maxAgents = fs.Int("max-agents", store.DefaultMaxAgents, "most agents the service keeps (-1: no limit)")
	f.maxSchedules = fs.Int("max-schedules-per-agent", store.DefaultMaxSchedulesPerAgent, "most schedules an agent may have (-1: no limit)")
	f.runAs = fs.String("run-as", "", "run tasks as `USER` unless their agent names another (never as root or as the service's user); needs root")
	f.taskGuard = fs.String("task-guard", "auto", "keep tasks from the service's secrets (own pid, mount and IPC namespaces, data directory hidden, no device, reduced capabilities): `auto` where the kernel allows, on (refuse to start without it) or off")
	f.tlsCert = fs.String("tls-cert", "", "serve HTTPS with the certificate chain in `FILE` (PEM); the session cookie is then Secure")
	f.tlsKey = fs.String("tls-key", "", "the private key of --tls-cert, in `FILE` (PEM)")
	f.plainHTTP = fs.Bool("insecure-plain-http", false, "serve plain HTTP on a non-loopback --addr (only behind a TLS-terminating proxy on a trusted network)")
	fs.Var(&f.passEnv, "pass-env", "pass the service's variable `NAME` on to every task (repeatable; CORRAL_TOKEN and CORRAL_DB never are)")
	fs.Var(&f.publicHosts, "public-host", "a host `NAME` clients reach the service by, besides loopback names and IP addresses (repeatable)")
	fs.Var(&f.proxies, "trusted-proxy", "the `ADDR` (IP or CIDR) of a reverse proxy whose X-Forwarded-For and X-Forwarded-Proto are believed (repeatable)")
	f.prices = fs.String("prices", "", "a price table `FILE` (JSON, the shape of the one shipped: docs/budgets.md) adding to or replacing the shipped prices of models")
	f.verbose = fs.Bool("v", false, "log what the service does to stderr")
	f.hooks = addWebhookFlags(fs, "every agent's")
	f.otel = addServeTelemetryFlags(fs)
	return f
}

// serveSetup is what the flags of corral serve were checked into.
type serveSetup struct {
	f           *serveFlags
	loopback    bool
	tls         *tls.Config
	trusted     []netip.Prefix
	retainFor   time.Duration
	retainCount int
	limits      store.Limits
	token       string
	logger      *slog.Logger
	prices      *headless.Prices
	hooks       []corral.Webhook
	guard       service.GuardMode
}

// check validates the flags, before anything is opened or written.
func (f *serveFlags) check() (*serveSetup, error) {
	s := &serveSetup{f: f}
	if *f.data == "" {
		return nil, errors.New("no data directory: pass --data DIR or set CORRAL_DATA")
	}
	var err error
	if s.retainFor, s.retainCount, err = parseRetention(*f.retain); err != nil {
		return nil, err
	}
	if *f.maxAgents == 0 || *f.maxSchedules == 0 || *f.maxAgents < -1 || *f.maxSchedules < -1 {
		return nil, errors.New("--max-agents and --max-schedules-per-agent take a positive number, or -1 for no limit")
	}
	if n := *f.dbMaxConns; n != 0 && (n < postgres.MinConns || *f.dbURL == "") {
		return nil, fmt.Errorf("--db-max-conns %d: want at least %d connections to a PostgreSQL --db (none is opened to SQLite)", n, postgres.MinConns)
	}
	s.limits = store.Limits{MaxAgents: *f.maxAgents, MaxSchedulesPerAgent: *f.maxSchedules}
	if s.loopback, err = httpguard.ListensOnLoopback(*f.addr); err != nil {
		return nil, err
	}
	if s.tls, err = f.tlsConfig(s.loopback); err != nil {
		return nil, err
	}
	if s.trusted, err = httpguard.ParseProxies(f.proxies); err != nil {
		return nil, fmt.Errorf("--trusted-proxy: %v", err)
	}
	if *f.noAuth && !s.loopback {
		return nil, fmt.Errorf("refusing to serve %s without a token: drop --insecure-no-auth or bind a loopback address", *f.addr)
	}
	if err := checkRunAs(*f.runAs); err != nil {
		return nil, err
	}
	if *f.prices != "" {
		if s.prices, err = headless.LoadPrices(*f.prices); err != nil {
			return nil, err
		}
	}
	if s.hooks, err = f.hooks.Hooks(); err != nil {
		return nil, err
	}
	if s.guard, err = service.ParseGuardMode(*f.taskGuard); err != nil {
		return nil, fmt.Errorf("--task-guard: %v", err)
	}
	level := slog.LevelWarn
	if *f.verbose {
		level = slog.LevelInfo
	}
	s.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	return s, nil
}

// tlsConfig loads --tls-cert and --tls-key, or refuses plain HTTP off
// loopback unless --insecure-plain-http says so.
func (f *serveFlags) tlsConfig(loopback bool) (*tls.Config, error) {
	if (*f.tlsCert == "") != (*f.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together: give both, or neither")
	}
	if *f.tlsCert == "" {
		if !loopback && !*f.plainHTTP {
			return nil, fmt.Errorf("refusing to serve %s over plain HTTP: the token and session cookies would cross the network in clear; give --tls-cert and --tls-key, or bind a loopback address behind a TLS-terminating proxy (--trusted-proxy), or say --insecure-plain-http", *f.addr)
		}
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(*f.tlsCert, *f.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %v", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
}

// openStore opens the database the flags name, and says which kind.
func (s *serveSetup) openStore(ctx context.Context) (store.Store, string, error) {
	url := *s.f.dbURL
	switch {
	case url == "":
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(*s.f.data, "corral.db"), Logger: s.logger, Limits: s.limits})
		return st, "sqlite", err
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		id := *s.f.workerID
		if id == "" {
			id = service.DefaultWorkerID(*s.f.data)
		}
		st, err := postgres.Open(ctx, postgres.Options{URL: url, MaxConns: *s.f.dbMaxConns, MaxRuns: *s.f.maxRuns,
			ApplicationName: "corral/" + id, Logger: s.logger, Limits: s.limits})
		return st, "postgres", err
	}
	return nil, "", fmt.Errorf("--db %q: want a PostgreSQL URL (postgres://USER@HOST/DB?sslmode=…), or nothing for SQLite in the data directory", url)
}

// newService returns the worker on st that the flags describe.
func (s *serveSetup) newService(st store.Store) (*service.Service, error) {
	f := s.f
	secrets := dbSecrets(*f.dbURL)
	if s.token != "" {
		secrets = append(secrets, s.token)
	}
	var labels []string
	for _, l := range strings.Split(*f.labels, ",") {
		if l = strings.TrimSpace(l); l != "" {
			labels = append(labels, l)
		}
	}
	cfg := service.Config{Store: st, DataDir: *f.data, WorkerID: *f.workerID, Labels: labels, Lease: *f.lease,
		ShutdownTimeout: *f.shutdownTimeout, MaxRuns: *f.maxRuns, Secrets: secrets, PassEnv: f.passEnv, RunAs: *f.runAs, Logger: s.logger,
		RetainFor: s.retainFor, RetainCount: s.retainCount, Prices: s.prices, Webhooks: s.hooks,
		Guard: s.guard, Hide: hiddenFiles(*f.tlsKey, *f.dbURL)}
	f.otel.configure(&cfg)
	return service.New(cfg)
}

// handler returns the HTTP API with the web UI, on svc.
func (s *serveSetup) handler(svc *service.Service) (http.Handler, error) {
	lock := &lockout.Guard{}
	ui, err := web.New(web.Config{Service: svc, Token: s.token, Logger: s.logger, Lockout: lock})
	if err != nil {
		return nil, err
	}
	return api.New(api.Config{Service: svc, Token: s.token, Logger: s.logger, UI: ui, SessionAuth: ui.SessionAuth,
		PublicHosts: s.f.publicHosts, TrustedProxies: s.trusted, Lockout: lock})
}

// httpServer returns the server of h, its requests under base.
func (s *serveSetup) httpServer(h http.Handler, base context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Event streams, listings and log downloads set a deadline per
		// write instead; this bounds every other answer.
		WriteTimeout:   2 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return base },
		ErrorLog:       slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		TLSConfig:      s.tls,
	}
}

func serveMain(args []string) int {
	// First of all, before anything can start a process.
	taken, takeErr := takeServeSecrets()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), serveTelemetryHelp)
	}
	f := addServeFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "corral serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "corral serve: %v\n", err)
		return 1
	}
	if takeErr != nil {
		return fail(takeErr)
	}
	if *f.dbURL == "" {
		*f.dbURL = taken.db
	} else {
		scrubDBArg(f.dbURL)
	}
	s, err := f.check()
	if err != nil {
		return fail(err)
	}
	if err := hardenProcess(); err != nil {
		return fail(err)
	}
	if err := prepareDataDir(*f.data); err != nil {
		return fail(err)
	}
	if !*f.noAuth {
		if s.token, err = loadOrCreateToken(*f.data, taken.token); err != nil {
			return fail(err)
		}
	}
	// The first SIGINT or SIGTERM asks for a graceful stop (ctx), a second
	// one stops the runs at once (serve).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "corral serve: %v: taking no new work; runs in flight have %v to finish (a second signal stops them now)\n", sig, *f.shutdownTimeout)
			stop()
		case <-ctx.Done():
		}
	}()
	st, dbKind, err := s.openStore(ctx)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	svc, err := s.newService(st)
	if err != nil {
		return fail(err)
	}
	guarded, _ := svc.Guarded()
	if err := hideMemory(guarded); err != nil {
		return fail(err)
	}
	if err := svc.Start(ctx); err != nil {
		return fail(err)
	}
	return s.serve(ctx, sigs, svc, dbKind)
}

// serve serves the API and the UI of the started svc until ctx ends (a
// signal) or the server fails, then stops the service gracefully; a
// signal on sigs meanwhile stops its runs at once.
func (s *serveSetup) serve(ctx context.Context, sigs <-chan os.Signal, svc *service.Service, dbKind string) int {
	closeSvc := func() {
		cctx, cancel := context.WithTimeout(context.Background(), *s.f.shutdownTimeout+time.Minute)
		defer cancel()
		if err := svc.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "corral serve: stopping the service:", err)
		}
	}
	h, err := s.handler(svc)
	if err != nil {
		closeSvc()
		fmt.Fprintf(os.Stderr, "corral serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *s.f.addr)
	if err != nil {
		closeSvc()
		fmt.Fprintf(os.Stderr, "corral serve: listen: %v (is another corral serve running? pick --addr)\n", err)
		return 1
	}
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := s.httpServer(h, baseCtx)
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
	}
	printGuard(svc)
	fmt.Fprintf(os.Stderr, "corral serve: listening on %s://%s (data %s, worker %s, %s)\n", scheme, ln.Addr(), *s.f.data, svc.WorkerID(), dbKind)
	errc := make(chan error, 1)
	go func() {
		if s.tls != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	code := 0
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "corral serve:", err)
		code = 1
	}
	// Drain first, still serving: clients can watch and cancel the runs
	// finishing, /readyz answers 503 and submissions 503 meanwhile. A
	// second signal stops the runs at once.
	drained := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "corral serve: %v again: stopping the runs in flight now\n", sig)
			svc.Interrupt(fmt.Sprintf("the worker (%s) was told to stop at once (a second %v during its shutdown)", svc.WorkerID(), sig))
		case <-drained:
		}
	}()
	closeSvc()
	close(drained)
	cancelBase() // ends event streams
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	srv.Shutdown(sctx)
	cancel()
	return code
}

// loadOrCreateToken returns envToken (CORRAL_TOKEN's value), or the token
// in DIR/token, creating it (mode 0600) and printing it once when it does
// not exist.
func loadOrCreateToken(dir, envToken string) (string, error) {
	if t := strings.TrimSpace(envToken); t != "" {
		return t, nil
	}
	path := filepath.Join(dir, "token")
	if b, err := os.ReadFile(path); err == nil {
		st, err := os.Stat(path)
		if err == nil && st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("token file %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", fmt.Errorf("token file %s is empty: delete it to have a new token made", path)
		}
		return t, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token: %w", err)
	}
	var b [32]byte
	rand.Read(b[:])
	t := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create token file: %w", err)
	}
	if _, err := f.WriteString(t + "\n"); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "corral serve: created the API token (shown once; it is kept in %s):\n%s\n", path, t)
	return t, nil
}

// dbPassword returns the password of a database URL, or "".
func dbPassword(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// dbSecrets returns what of a database URL no task may see: the URL and
// its password.
func dbSecrets(dbURL string) []string {
	if dbURL == "" {
		return nil
	}
	out := []string{dbURL}
	if p := dbPassword(dbURL); p != "" {
		out = append(out, p)
	}
	return out
}

// checkRunAs refuses a --run-as that cannot work or defeats its purpose,
// and warns when tasks will run as root.
func checkRunAs(name string) error {
	if name == "" {
		if os.Geteuid() == 0 {
			fmt.Fprintln(os.Stderr, "corral serve: warning: running as root without --run-as: tasks run as root; the task guard keeps them from the service's secrets, not from changing this machine (its files, its other services), and through it the service later; give them a user of their own with --run-as (see docs/service.md)")
		}
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		if u, err = user.LookupId(name); err != nil {
			return fmt.Errorf("--run-as %s: no such user on this machine", name)
		}
	}
	if u.Uid == "0" || u.Uid == strconv.Itoa(os.Geteuid()) {
		return fmt.Errorf("--run-as %s: tasks must run as an unprivileged user other than the service's own (uid %s could read the service's data)", name, u.Uid)
	}
	if os.Geteuid() != 0 {
		fmt.Fprintf(os.Stderr, "corral serve: warning: --run-as %s needs the privilege to switch users (root, or CAP_SETUID and CAP_SETGID); tasks will fail to start without it\n", name)
	}
	return nil
}
