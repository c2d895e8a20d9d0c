package executor

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
)

// Sessions keeps the state of headless sessions between the attempts of a
// run (the service's store). GetSessionState fails with an error that
// errors.Is an ErrNotFound of its own for a session it does not keep; the
// executor treats any error as "none kept".
type Sessions interface {
	GetSessionState(ctx context.Context, sessionID string) (*corral.SessionState, error)
	PutSessionState(ctx context.Context, st *corral.SessionState) error
}

// CaptureEvery is how often a running turn's session file is saved when
// it changed: a worker killed mid-turn loses at most this much of it.
const CaptureEvery = 2 * time.Second

// agentCLI names the agent CLI a command template runs: "claude" or
// "codex" (its program, or the script a node or npx runs), "" for another.
func agentCLI(template []string) string {
	for i, a := range template {
		if i > 1 {
			break
		}
		switch strings.TrimSuffix(filepath.Base(a), ".js") {
		case "claude", "cli":
			if strings.Contains(a, "claude") {
				return "claude"
			}
		case "codex":
			return "codex"
		}
	}
	return ""
}

// stateDir is the directory a CLI keeps its sessions in, as the run's
// environment env sets it.
func stateDir(cli string, env []string) string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	switch cli {
	case "claude":
		if d := get("CLAUDE_CONFIG_DIR"); d != "" {
			return d
		}
		return filepath.Join(get("HOME"), ".claude")
	case "codex":
		if d := get("CODEX_HOME"); d != "" {
			return d
		}
		return filepath.Join(get("HOME"), ".codex")
	}
	return ""
}

// sessionFile finds the file of session id under the CLI's state dir.
func sessionFile(cli, dir, id string) string {
	var pattern string
	switch cli {
	case "claude":
		pattern = filepath.Join(dir, "projects", "*", id+".jsonl")
	case "codex":
		pattern = filepath.Join(dir, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl")
	default:
		return ""
	}
	m, _ := filepath.Glob(pattern)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// claudeProject is the directory Claude Code keeps a working directory's
// sessions in: the path with every character but letters and digits
// turned into '-'.
func claudeProject(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// resumeArgs is the command line that continues session id of the CLI
// with prompt, from the agent's template: `claude --resume ID …` and
// `codex exec … resume ID -- PROMPT`.
func resumeArgs(template []string, cli, id, prompt string) ([]string, error) {
	args, err := PromptArgs(template, prompt)
	if err != nil {
		return nil, err
	}
	switch cli {
	case "claude":
		i := 1
		if len(args) > 1 && strings.Contains(args[1], "claude") {
			i = 2 // node cli.js
		}
		return slices.Insert(args, i, "--resume", id), nil
	case "codex":
		// resume is a subcommand of exec: exec's options stay before it,
		// the prompt goes after the session id.
		p := slices.Index(args, prompt)
		if p < 0 {
			return nil, errors.New("the prompt is not an argument of its own in the agent's command")
		}
		at := p
		if at > 0 && args[at-1] == "--" {
			at--
		}
		return slices.Insert(args, at, "resume", id), nil
	}
	return nil, fmt.Errorf("resume needs a claude or codex command, not %s", filepath.Base(template[0]))
}

// restore writes st's file where the CLI of a run in cwd looks for it,
// owned by the run's user (cred, nil for the service's own), unless a
// longer copy is already there (a worker on this machine ran it last).
func restore(st *corral.SessionState, dir, cwd string, cred *proc.Credential) error {
	path := filepath.Join(dir, filepath.FromSlash(st.Path))
	if st.CLI == "claude" {
		path = filepath.Join(dir, "projects", claudeProject(cwd), st.SessionID+".jsonl")
	}
	if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
		return fmt.Errorf("session state path %q leaves the CLI's directory", st.Path)
	}
	zr, err := gzip.NewReader(bytes.NewReader(st.Data))
	if err != nil {
		return fmt.Errorf("session state of %s: %w", st.SessionID, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, 1<<30))
	if err != nil {
		return fmt.Errorf("session state of %s: %w", st.SessionID, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() >= int64(len(data)) || mutant.NoRestore {
		return nil
	}
	if err := mkdirOwned(filepath.Dir(path), dir, cred); err != nil {
		return err
	}
	tmp := path + ".corral-restore"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(tmp, int(cred.UID), int(cred.GID)); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return os.Rename(tmp, path)
}

// mkdirOwned makes dir and its parents up to top (included), mode 0700,
// owned by cred's user when they are new.
func mkdirOwned(dir, top string, cred *proc.Credential) error {
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
		if d == top || d == filepath.Dir(d) {
			break
		}
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := os.Mkdir(made[i], 0o700); err != nil && !os.IsExist(err) {
			return err
		}
		if cred != nil {
			if err := os.Chown(made[i], int(cred.UID), int(cred.GID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionCapture saves a running session's file while the turn goes on (when it
// changed, every CaptureEvery) and once more at its end (save), so that
// the next attempt on any worker can resume it.
type sessionCapture struct {
	keep Sessions
	cli  string
	dir  string

	mu      sync.Mutex
	id      string
	size    int64
	mtime   time.Time
	stop    chan struct{}
	stopped chan struct{}
}

func startCapture(keep Sessions, cli, dir string) *sessionCapture {
	c := &sessionCapture{keep: keep, cli: cli, dir: dir, stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.loop()
	return c
}

// session tells the capture the turn's session id.
func (c *sessionCapture) session(id string) {
	c.mu.Lock()
	if c.id == "" {
		c.id = id
	}
	c.mu.Unlock()
}

func (c *sessionCapture) loop() {
	defer close(c.stopped)
	t := time.NewTicker(CaptureEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.save(false, 0, nil)
		}
	}
}

// end stops the loop and saves the file a last time with what the CLI
// reported for the session as a whole.
func (c *sessionCapture) end(cost float64, usage json.RawMessage) {
	close(c.stop)
	<-c.stopped
	c.save(true, cost, usage)
}

// save keeps the session's file if it changed since the last save (or
// always, at the end: final), with what the CLI reported for the whole
// session when it is known.
func (c *sessionCapture) save(final bool, cost float64, usage json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == "" {
		return
	}
	path := sessionFile(c.cli, c.dir, c.id)
	if path == "" {
		return
	}
	fi, err := os.Stat(path)
	if err != nil || !final && fi.Size() == c.size && fi.ModTime().Equal(c.mtime) {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	rel, _ := filepath.Rel(c.dir, path)
	st := &corral.SessionState{SessionID: c.id, CLI: c.cli, Path: filepath.ToSlash(rel), Data: z.Bytes(),
		CostUSD: cost, Usage: usage, UpdatedAt: time.Now().UTC()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.keep.PutSessionState(ctx, st) == nil {
		c.size, c.mtime = fi.Size(), fi.ModTime()
	}
}

// before is what session st had spent before this attempt, as the
// headless layer takes it (Spec.Before).
func before(st *corral.SessionState) *headless.Spend {
	b := &headless.Spend{CostUSD: st.CostUSD, CostReported: st.CostUSD > 0}
	json.Unmarshal(st.Usage, &b.Usage)
	return b
}

// sessionTotals are what a CLI reports for a whole session after an
// attempt that spent o (its own share) on top of prior (nil: none).
func sessionTotals(o *corral.Outcome, prior *corral.SessionState) (float64, json.RawMessage) {
	if prior == nil {
		return o.CostUSD, o.Usage
	}
	return o.CostUSD + prior.CostUSD, combineUsage(o.Usage, prior.Usage, 1)
}

// combineUsage returns the numeric fields of a plus sign times those of b
// (at least 0); other fields as in a.
func combineUsage(a, b json.RawMessage, sign float64) json.RawMessage {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return a
	}
	for k, v := range x {
		n, ok1 := v.(float64)
		m, ok2 := y[k].(float64)
		if ok1 && ok2 {
			x[k] = max(n+sign*m, 0)
		}
	}
	out, err := json.Marshal(x)
	if err != nil {
		return a
	}
	return out
}
