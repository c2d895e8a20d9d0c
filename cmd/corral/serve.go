package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	_ "time/tzdata" // schedules name IANA zones; a fresh machine may lack the database

	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/sqlite"
	"github.com/corralrun/corral/web"
)

func init() {
	register("serve", "run the task service: agents, slots, schedules, HTTP API, web UI", serveMain)
}

const serveUsage = `Usage: corral serve [--addr HOST:PORT] [--data DIR] [--db postgres://…]

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

After a crash (even kill -9), the next start kills what the previous
instance left running, records its runs as interrupted with what they had
logged, frees their slots, and resumes the queue.

Many workers, one fleet: with --db postgres://USER@HOST/DB (or
CORRAL_DB) every worker shares one PostgreSQL database: slots hold across
the fleet, each schedule fire is taken once, a cancel reaches the worker
that runs the task, and a worker that dies or loses the database for
--lease has its runs recorded as interrupted by the others (it stops them
itself when it cannot renew its lease). --labels pins agents that require
labels to the workers that advertise them. See docs/deploy.md.

SIGINT or SIGTERM stops the service gracefully: it takes no new work
(/readyz answers 503), lets runs in flight finish for up to
--shutdown-timeout, then stops the rest and records them as interrupted;
queued tasks wait for another worker or the next start.

Environment: CORRAL_DATA (default data directory), CORRAL_DB (database
URL), CORRAL_TOKEN.

Flags:
`

func serveMain(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), serveUsage); fs.PrintDefaults() }
	addr := fs.String("addr", "127.0.0.1:7070", "listen on `HOST:PORT` (port 0 picks a free one)")
	data := fs.String("data", defaultDataDir(), "data `DIR`: database, run logs, token")
	maxRuns := fs.Int("max-runs", 256, "most executions this service runs at once, over all agents")
	dbURL := fs.String("db", os.Getenv("CORRAL_DB"), "shared PostgreSQL database `URL` (postgres://USER@HOST/DB?sslmode=…); empty means SQLite in the data directory")
	workerID := fs.String("worker-id", "", "this worker's `ID` in the fleet (default: host name and a hash of the data directory)")
	labels := fs.String("labels", "", "comma-separated `LABELS` this worker advertises; it runs the agents requiring only labels it has")
	lease := fs.Duration("lease", service.DefaultLease, "how long a silent worker is trusted before the fleet interrupts its runs")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "on SIGTERM, how long runs in flight may finish before they are interrupted")
	noAuth := fs.Bool("insecure-no-auth", false, "serve without a token (loopback addresses only)")
	retain := fs.String("retain-executions", "", retentionHelp)
	maxAgents := fs.Int("max-agents", store.DefaultMaxAgents, "most agents the service keeps (-1: no limit)")
	maxSchedules := fs.Int("max-schedules-per-agent", store.DefaultMaxSchedulesPerAgent, "most schedules an agent may have (-1: no limit)")
	verbose := fs.Bool("v", false, "log what the service does to stderr")
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
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "corral serve: "+format+"\n", a...)
		return 1
	}
	if *data == "" {
		return fail("no data directory: pass --data DIR or set CORRAL_DATA")
	}
	retainFor, retainCount, err := parseRetention(*retain)
	if err != nil {
		return fail("%v", err)
	}
	if *maxAgents == 0 || *maxSchedules == 0 || *maxAgents < -1 || *maxSchedules < -1 {
		return fail("--max-agents and --max-schedules-per-agent take a positive number, or -1 for no limit")
	}
	limits := store.Limits{MaxAgents: *maxAgents, MaxSchedulesPerAgent: *maxSchedules}
	loopback, err := isLoopback(*addr)
	if err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(*data, 0o700); err != nil {
		return fail("create data directory: %v", err)
	}
	token := ""
	if !*noAuth {
		if token, err = loadOrCreateToken(*data); err != nil {
			return fail("%v", err)
		}
	} else if !loopback {
		return fail("refusing to serve %s without a token: drop --insecure-no-auth or bind a loopback address", *addr)
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	var st store.Store
	dbKind := "sqlite"
	switch {
	case *dbURL == "":
		st, err = sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(*data, "corral.db"), Logger: logger, Limits: limits})
	case strings.HasPrefix(*dbURL, "postgres://"), strings.HasPrefix(*dbURL, "postgresql://"):
		dbKind = "postgres"
		st, err = postgres.Open(ctx, postgres.Options{URL: *dbURL, Logger: logger, Limits: limits})
	default:
		return fail("--db %q: want a PostgreSQL URL (postgres://USER@HOST/DB?sslmode=…), or nothing for SQLite in the data directory", *dbURL)
	}
	if err != nil {
		return fail("%v", err)
	}
	defer st.Close()
	var secrets []string
	if token != "" {
		secrets = append(secrets, token)
	}
	var labelList []string
	for _, l := range strings.Split(*labels, ",") {
		if l = strings.TrimSpace(l); l != "" {
			labelList = append(labelList, l)
		}
	}
	svc, err := service.New(service.Config{Store: st, DataDir: *data, WorkerID: *workerID, Labels: labelList, Lease: *lease,
		ShutdownTimeout: *shutdownTimeout, MaxRuns: *maxRuns, Secrets: secrets, Logger: logger,
		RetainFor: retainFor, RetainCount: retainCount})
	if err != nil {
		return fail("%v", err)
	}
	if err := svc.Start(ctx); err != nil {
		return fail("%v", err)
	}
	closeSvc := func() {
		cctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout+time.Minute)
		defer cancel()
		if err := svc.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "corral serve: stopping the service:", err)
		}
	}
	ui, err := web.New(web.Config{Service: svc, Token: token, Logger: logger})
	if err != nil {
		closeSvc()
		return fail("%v", err)
	}
	handler, err := api.New(api.Config{Service: svc, Token: token, Logger: logger, UI: ui, SessionAuth: ui.SessionAuth})
	if err != nil {
		closeSvc()
		return fail("%v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		closeSvc()
		return fail("listen: %v (is another corral serve running? pick --addr)", err)
	}
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Event streams, listings and log downloads set a deadline per
		// write instead; this bounds every other answer.
		WriteTimeout:   2 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return baseCtx },
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(os.Stderr, "corral serve: listening on http://%s (data %s, worker %s, %s)\n", ln.Addr(), *data, svc.WorkerID(), dbKind)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	code := 0
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "corral serve:", err)
		code = 1
	}
	// Drain first, still serving: clients can watch and cancel the runs
	// finishing, /readyz answers 503 and submissions 503 meanwhile.
	closeSvc()
	cancelBase() // ends event streams
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	srv.Shutdown(sctx)
	cancel()
	return code
}

// defaultDataDir is CORRAL_DATA, else $XDG_DATA_HOME/corral, else
// ~/.local/share/corral.
func defaultDataDir() string {
	if d := os.Getenv("CORRAL_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "corral")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "corral")
	}
	return ""
}

func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %q: want HOST:PORT, such as 127.0.0.1:7070", addr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// loadOrCreateToken returns CORRAL_TOKEN, or the token in DIR/token,
// creating it (mode 0600) and printing it once when it does not exist.
func loadOrCreateToken(dir string) (string, error) {
	if t := strings.TrimSpace(os.Getenv("CORRAL_TOKEN")); t != "" {
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
