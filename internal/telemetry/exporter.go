package telemetry

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corralrun/corral/internal/telemetry/wire"
)

// queueLen bounds the ended spans waiting for the companion: a companion
// that does not keep up never slows a run; what does not fit is dropped
// and counted.
const queueLen = 4096

// exporter hands ended spans to the companion over its standard input:
// the header first, then a frame per span (see package wire). The companion is started by the
// writing goroutine at the first span, so a command that ends no span
// starts no process.
type exporter struct {
	path   string
	header wire.Header
	warn   func(string)

	mu     sync.RWMutex // held for writing to close q
	q      chan []byte
	closed bool

	started chan struct{} // closed once the writer is running
	once    sync.Once
	done    chan struct{} // the writer has ended

	dropped  atomic.Int64
	firstErr atomic.Pointer[error]

	cmdMu sync.Mutex
	cmd   *exec.Cmd
	exit  chan struct{} // closed when cmd has been waited for
}

func newExporter(path string, c *Config) *exporter {
	return &exporter{
		path: path,
		header: wire.Header{
			Env:            c.OTELEnv(),
			FlushTimeout:   c.flushTimeout(),
			ServiceVersion: c.Version,
			Pid:            os.Getpid(),
			Command:        c.Command,
		},
		warn:    c.Warn,
		q:       make(chan []byte, queueLen),
		started: make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// send queues an ended span's frame; it never blocks.
func (e *exporter) send(line []byte) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		e.drop(errors.New("a span ended after the flush at exit began"))
		return
	}
	e.once.Do(func() { close(e.started); go e.write() })
	select {
	case e.q <- line:
	default:
		e.drop(errors.New("the exporter did not keep up"))
	}
}

// drop counts a span that will not be exported, keeping the first reason.
func (e *exporter) drop(err error) {
	e.dropped.Add(1)
	e.firstErr.CompareAndSwap(nil, &err)
}

// flushEvery is how long an ended span may wait in corral before it is
// handed over: spans go to the companion in batches, so that a busy
// command stream does not wake the companion for every span (a span is
// about 1 KiB; the buffer holds 64). Shutdown hands over what is left.
const flushEvery = 200 * time.Millisecond

// write is the writing goroutine: it starts the companion, then writes
// the queued lines, flushing flushEvery after the first unflushed one (or
// when the buffer fills). After a failure it drops what comes. It ends
// when q is closed and emptied, closing the companion's input.
func (e *exporter) write() {
	defer close(e.done)
	in, err := e.startCompanion()
	var w *bufio.Writer
	if err == nil {
		w = bufio.NewWriterSize(in, 64<<10)
		err = e.writeHeader(w)
	}
	tick := time.NewTimer(flushEvery)
	defer tick.Stop()
	pending := false
	flush := func() {
		if ferr := w.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("writing to %s: %w", e.path, ferr)
		}
		pending = false
	}
	for {
		select {
		case line, ok := <-e.q:
			if !ok {
				if w != nil {
					flush()
				}
				if in != nil {
					in.Close()
				}
				return
			}
			if err != nil {
				e.drop(err)
				continue
			}
			w.Write(line)
			if !pending {
				pending = true
				tick.Reset(flushEvery)
			}
		case <-tick.C:
			if pending && err == nil {
				flush()
			}
		}
	}
}

func (e *exporter) writeHeader(w *bufio.Writer) error {
	b, err := json.Marshal(&e.header)
	if err != nil {
		return err
	}
	w.Write(b)
	return w.WriteByte('\n')
}

// startCompanion starts corral-otlp with its input on a pipe. Its
// environment is a short list (see companionEnv): the OTEL_* variables,
// which may hold credentials, reach it in the header.
func (e *exporter) startCompanion() (io.WriteCloser, error) {
	cmd := exec.Command(e.path)
	cmd.Env = companionEnv(os.Environ())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	e.cmdMu.Lock()
	defer e.cmdMu.Unlock()
	if err := cmd.Start(); err != nil {
		in.Close()
		return nil, fmt.Errorf("starting %s: %w", e.path, err)
	}
	e.cmd, e.exit = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(e.exit) }()
	return in, nil
}

// companionEnv keeps what the companion needs to reach a collector (the
// path, the home and temporary directories, TLS roots, proxies, the Go
// runtime's settings) and a test's process tag, and nothing else of
// corral's environment.
func companionEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch strings.ToUpper(k) {
		case "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "SSL_CERT_FILE", "SSL_CERT_DIR",
			"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "GODEBUG", "GOMAXPROCS", "SYSTEMROOT", "CORRAL_TEST_TAG":
			out = append(out, kv)
		}
	}
	return out
}

// shutdown closes the queue and waits, within the flush timeout and ctx,
// for the writer to hand everything over and for the companion to export
// it and exit; then kills the companion if it is still there.
func (e *exporter) shutdown(ctx context.Context) error {
	e.mu.Lock()
	already := e.closed
	e.closed = true
	if !already {
		close(e.q)
	}
	e.mu.Unlock()
	if already {
		return nil
	}
	select {
	case <-e.started:
	default:
		return e.report() // nothing was ever sent: no companion
	}
	t := time.NewTimer(e.waitBound())
	defer t.Stop()
	var timedOut bool
	select {
	case <-e.done:
		timedOut = !e.waitExit(t.C, ctx.Done())
	case <-t.C:
		timedOut = true
	case <-ctx.Done():
		timedOut = true
	}
	if timedOut {
		e.kill()
		<-e.done
		e.waitExit(nil, nil)
		return errors.Join(e.report(), fmt.Errorf("%s did not finish exporting within %v: it was stopped", e.path, e.header.FlushTimeout))
	}
	return errors.Join(e.report(), e.exitError())
}

// exitError reports a companion that exited with a failure (it said why
// on standard error).
func (e *exporter) exitError() error {
	e.cmdMu.Lock()
	defer e.cmdMu.Unlock()
	if e.cmd == nil || e.cmd.ProcessState == nil || e.cmd.ProcessState.Success() {
		return nil
	}
	return fmt.Errorf("%s failed (%v): spans may not have been exported", e.path, e.cmd.ProcessState)
}

// waitExit waits for the companion to exit; false when timer or done came
// first.
func (e *exporter) waitExit(timer <-chan time.Time, done <-chan struct{}) bool {
	e.cmdMu.Lock()
	exit := e.exit
	e.cmdMu.Unlock()
	if exit == nil {
		return true
	}
	select {
	case <-exit:
		return true
	case <-timer:
	case <-done:
	}
	return false
}

func (e *exporter) kill() {
	e.cmdMu.Lock()
	defer e.cmdMu.Unlock()
	if e.cmd != nil && e.cmd.Process != nil {
		e.cmd.Process.Kill()
	}
}

// report says how many spans were dropped, and why.
func (e *exporter) report() error {
	n := e.dropped.Load()
	if n == 0 {
		return nil
	}
	reason := "unknown"
	if p := e.firstErr.Load(); p != nil {
		reason = (*p).Error()
	}
	return fmt.Errorf("%d spans were not exported: %s", n, reason)
}
