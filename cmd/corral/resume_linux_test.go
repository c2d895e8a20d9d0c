package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
)

// savedSession returns the session file a worker of the fleet saved for
// session id, "" while there is none.
func savedSession(t *testing.T, db, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var data []byte
	if err := conn.QueryRow(ctx, `SELECT data FROM corral_session_states WHERE session_id = $1`, id).Scan(&data); err != nil {
		return ""
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(zr)
	return string(b)
}

// TestFleetResumesAKilledTurnOnAnotherWorker: the real Claude Code and
// Codex, against the fake model, are killed mid-turn with the worker that
// ran them (kill -9, while a tool call runs). Their session's state,
// saved while the turn went on, is all the next worker has: the local
// session files are deleted. The run's next attempt, on another worker of
// the PostgreSQL fleet, resumes the session (claude --resume, codex exec
// resume): the model's request carries the earlier conversation, and the
// run ends succeeded as attempt 2 linked to attempt 1.
func TestFleetResumesAKilledTurnOnAnotherWorker(t *testing.T) {
	for _, cli := range []string{"claude", "codex"} {
		t.Run(cli, func(t *testing.T) {
			model := testutil.FakeModel(t, "resume", fakemodel.Options{})
			agent := testutil.Claude(t, model, "{{prompt}}")
			sessions := filepath.Join(agent.Home, ".claude", "projects")
			if cli == "codex" {
				agent = testutil.Codex(t, model, "{{prompt}}")
				sessions = filepath.Join(agent.Home, ".codex", "sessions")
			}
			f := newFleet(t, 2, "--lease", "3s", "--shutdown-timeout", "0s")
			c := f.workers[0].c
			env := map[string]string{}
			for _, kv := range agent.Env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			createAgent(t, c, &client.Agent{Name: "r", Kind: corral.KindHeadless, Command: agent.Args, Env: env,
				Timeout: corral.Duration(5 * time.Minute), IdleTimeout: corral.Duration(5 * time.Minute), MaxParallelTasks: 2,
				Retry: corral.Retry{MaxAttempts: 2, RetryBackoff: corral.Duration(8 * time.Second), Resume: true}})
			var b [6]byte
			rand.Read(b[:])
			marker := "resume-marker-" + hex.EncodeToString(b[:])
			e, err := c.Submit(bg, "r", marker+": run the command", 0)
			if err != nil {
				t.Fatal(err)
			}
			var first *client.Execution
			testutil.WaitFor(t, 90*time.Second, "the turn's tool call saved in its session's state", func() bool {
				first, _ = c.Execution(bg, e.ID)
				return first != nil && first.SessionID != "" && strings.Contains(savedSession(t, f.db, first.SessionID), "sleep 300")
			})
			var owner *served
			for i, w := range f.workers {
				if first.WorkerID == fmt.Sprint("w", i) {
					owner = w
				}
			}
			if owner == nil {
				t.Fatalf("attempt 1 runs on %q", first.WorkerID)
			}
			owner.kill9()
			// Another machine would not have the session's files.
			if err := os.RemoveAll(sessions); err != nil {
				t.Fatal(err)
			}
			for _, w := range f.workers {
				if w != owner {
					c = w.c
				}
			}
			one := waitTerminal(t, c, e.ID, time.Minute)
			if one.Status != corral.StatusInterrupted || one.RetriedBy == "" {
				t.Fatalf("attempt 1: %s %q, retried by %q", one.Status, one.Error, one.RetriedBy)
			}
			two := waitTerminal(t, c, one.RetriedBy, 3*time.Minute)
			t.Logf("attempt 2 on %s: %s %q, resumed %s, note %q", two.WorkerID, two.Status, two.Result, two.ResumeSession, two.ResumeNote)
			if two.Status != corral.StatusSucceeded || two.Attempt != 2 || two.RetryOf != one.ID || two.WorkerID == first.WorkerID {
				t.Fatalf("attempt 2: %s attempt %d retry of %q on %s: %q", two.Status, two.Attempt, two.RetryOf, two.WorkerID, two.Error)
			}
			if two.ResumeSession != first.SessionID || two.ResumeNote != "" || two.SessionID != first.SessionID {
				t.Fatalf("attempt 2 resumed %q (note %q) as session %q, want %s", two.ResumeSession, two.ResumeNote, two.SessionID, first.SessionID)
			}
			if !strings.HasPrefix(two.Result, fakemodel.ResumedPrefix) || !strings.Contains(two.Result, marker) {
				t.Fatalf("attempt 2's answer %q: the model was not given the earlier conversation", two.Result)
			}
			carried := false
			for _, r := range model.Requests() {
				carried = carried || r.Mentions(fakemodel.ResumeWords) && r.Mentions(marker)
			}
			if !carried {
				t.Fatal("no request of the resumed turn carried the earlier conversation")
			}
			f.stop()
		})
	}
}
