package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// modernc's SQLite and River keep no goroutines after Close; the
		// database/sql opener goroutine ends with the DB.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

var bg = context.Background()

type fixture struct {
	t   *testing.T
	svc *service.Service
	st  store.Store
	dir string
	tag string
}

// eachBackend runs fn as a subtest per store driver: SQLite, and
// PostgreSQL when storetest.PostgresEnv is set.
func eachBackend(t *testing.T, fn func(t *testing.T, b storetest.Backend)) {
	for _, b := range storetest.Backends() {
		t.Run(b.Name, func(t *testing.T) { fn(t, b) })
	}
}

func newFixture(t *testing.T, b storetest.Backend, cfg service.Config) *fixture {
	t.Helper()
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	dir := t.TempDir()
	_, open := b.Fresh(t, dir)
	st := open()
	cfg.Store = st
	cfg.DataDir = dir
	cfg.Env = append(cfg.Env, testutil.TagEnvVar(tag))
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(bg); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, svc: svc, st: st, dir: dir, tag: tag}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		if err := svc.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		testutil.AssertNoTagged(t, tag, 5*time.Second)
	})
	return f
}

func (f *fixture) agent(a corral.Agent) *corral.Agent {
	f.t.Helper()
	if a.Kind == "" {
		a.Kind = corral.KindShell
	}
	got, err := f.svc.CreateAgent(bg, &a)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

func (f *fixture) submit(agent, input string) *corral.Execution {
	f.t.Helper()
	e, err := f.svc.Submit(bg, service.Task{Agent: agent, Input: input})
	if err != nil {
		f.t.Fatalf("submit %q: %v", input, err)
	}
	return e
}

// logPath returns where the worker logs execution id.
func (f *fixture) logPath(id string) string {
	f.t.Helper()
	r, err := f.st.GetRun(bg, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.LogPath
}

func (f *fixture) get(id string) *corral.Execution {
	f.t.Helper()
	e, err := f.svc.Execution(bg, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

func (f *fixture) waitStatus(id string, timeout time.Duration, want ...corral.Status) *corral.Execution {
	f.t.Helper()
	var e *corral.Execution
	testutil.WaitFor(f.t, timeout, fmt.Sprintf("execution %s reaching %v", id, want), func() bool {
		e = f.get(id)
		for _, w := range want {
			if e.Status == w {
				return true
			}
		}
		return false
	})
	return e
}

func (f *fixture) waitTerminal(id string, timeout time.Duration) *corral.Execution {
	f.t.Helper()
	var e *corral.Execution
	testutil.WaitFor(f.t, timeout, "execution "+id+" finishing", func() bool {
		e = f.get(id)
		return e.Status.Terminal()
	})
	return e
}

func TestShellTaskRunsAndRecordsItsOutput(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "sh"})
		e := f.submit("sh", "echo hello; echo oops >&2; exit 3")
		if e.Status != corral.StatusRunning {
			t.Fatalf("admitted as %s", e.Status)
		}
		e = f.waitTerminal(e.ID, 20*time.Second)
		if e.Status != corral.StatusFailed || e.ErrorType != corral.ErrorExit || e.ExitCode == nil || *e.ExitCode != 3 {
			t.Fatalf("got %s %s %v", e.Status, e.ErrorType, e.ExitCode)
		}
		if e.Stdout != "hello\n" || e.Stderr != "oops\n" || e.StartedAt == nil || e.FinishedAt == nil {
			t.Fatalf("record: %+v", e)
		}
		if r, err := f.st.GetRun(bg, e.ID); err != nil || len(r.Handle) == 0 || r.LogPath == "" {
			t.Fatalf("what the worker keeps beside the record: %+v (%v)", r, err)
		}
		if e.Containment == "" {
			t.Fatal("containment not recorded")
		}
		ok := f.submit("sh", "true")
		if ok = f.waitTerminal(ok.ID, 20*time.Second); ok.Status != corral.StatusSucceeded {
			t.Fatalf("true: %s %s", ok.Status, ok.Error)
		}
	})
}

func TestRejectAnswersAtOnceWithCapacityMessage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "r", MaxParallelTasks: 2})
		a, b := f.submit("r", "sleep 30"), f.submit("r", "sleep 30")
		e, err := f.svc.Submit(bg, service.Task{Agent: "r", Input: "true"})
		var rej *service.RejectedError
		if !errors.As(err, &rej) || !errors.Is(err, service.ErrAtCapacity) {
			t.Fatalf("third submission: %v", err)
		}
		if err.Error() != "agent at capacity (2/2 parallel tasks running)" || e.Status != corral.StatusRejected {
			t.Fatalf("message %q, status %s", err, e.Status)
		}
		if got := f.get(e.ID); got.Status != corral.StatusRejected {
			t.Fatal("rejection not recorded")
		}
		for _, x := range []*corral.Execution{a, b} {
			if _, err := f.svc.Cancel(bg, x.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range []*corral.Execution{a, b} {
			if got := f.waitTerminal(x.ID, 20*time.Second); got.Status != corral.StatusCancelled {
				t.Fatalf("%s: %s", x.ID, got.Status)
			}
		}
	})
}

func TestQueueStartsTheOldestWhenASlotFrees(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "q", MaxParallelTasks: 1, Overflow: corral.OverflowQueue, MaxBacklog: 5})
		dir := t.TempDir()
		first := f.submit("q", "sleep 0.3; echo 1 >> "+dir+"/order")
		var ids []string
		for i := 2; i <= 4; i++ {
			e := f.submit("q", fmt.Sprintf("echo %d >> %s/order", i, dir))
			if e.Status != corral.StatusQueued {
				t.Fatalf("submission %d: %s", i, e.Status)
			}
			ids = append(ids, e.ID)
		}
		f.waitTerminal(first.ID, 20*time.Second)
		for _, id := range ids {
			if e := f.waitTerminal(id, 20*time.Second); e.Status != corral.StatusSucceeded {
				t.Fatalf("%s: %s %s", id, e.Status, e.Error)
			}
		}
		out, _ := readFile(dir + "/order")
		if out != "1\n2\n3\n4\n" {
			t.Fatalf("ran in order %q, want FIFO", out)
		}
	})
}

func TestCancelStopsTheTreeAndReleasesOnlyItsOwnSlot(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "c", MaxParallelTasks: 3, Grace: corral.Duration(5 * time.Second)})
		var es []*corral.Execution
		for range 3 {
			// A background job and a setsid escapee: the whole tree must go.
			es = append(es, f.submit("c", "sleep 300 & setsid sleep 300 & sleep 300"))
		}
		for _, e := range es {
			testutil.WaitFor(t, 20*time.Second, "handle recorded", func() bool { return f.get(e.ID).Containment != "" })
		}
		if _, err := f.svc.Cancel(bg, es[1].ID); err != nil {
			t.Fatal(err)
		}
		got := f.waitTerminal(es[1].ID, 20*time.Second)
		if got.Status != corral.StatusCancelled || got.ErrorType != corral.ErrorCancelled {
			t.Fatalf("cancelled run: %s %s", got.Status, got.ErrorType)
		}
		slots, _ := f.svc.Slots(bg, "c")
		if len(slots) != 2 {
			t.Fatalf("%d slots after one cancel, want 2: %+v", len(slots), slots)
		}
		for _, sl := range slots {
			if sl.ExecutionID == es[1].ID {
				t.Fatal("the cancelled run still holds its slot")
			}
		}
		if _, err := f.svc.Cancel(bg, es[1].ID); !errors.Is(err, service.ErrConflict) {
			t.Fatalf("second cancel: %v", err)
		}
		for _, e := range []*corral.Execution{es[0], es[2]} {
			f.svc.Cancel(bg, e.ID)
			f.waitTerminal(e.ID, 20*time.Second)
		}
	})
}

func TestCancelRacingCompletionWritesOneConsistentEnd(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "race", MaxParallelTasks: 4, Overflow: corral.OverflowQueue, MaxBacklog: 100})
		var es []*corral.Execution
		for i := range 24 {
			es = append(es, f.submit("race", fmt.Sprintf("sleep 0.0%d", i%10)))
		}
		var wg sync.WaitGroup
		for i, e := range es {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i%8) * 15 * time.Millisecond)
				f.svc.Cancel(bg, e.ID)
			}()
		}
		wg.Wait()
		for _, e := range es {
			got := f.waitTerminal(e.ID, 30*time.Second)
			if got.Status != corral.StatusSucceeded && got.Status != corral.StatusCancelled {
				t.Fatalf("%s ended %s (%s)", e.ID, got.Status, got.Error)
			}
			// The record stays as first written.
			if again := f.get(e.ID); again.Status != got.Status || !again.FinishedAt.Equal(*got.FinishedAt) {
				t.Fatalf("terminal state rewritten: %s then %s", got.Status, again.Status)
			}
		}
		if slots, _ := f.svc.Slots(bg, "race"); len(slots) != 0 {
			t.Fatalf("slots left held: %+v", slots)
		}
	})
}

func TestFollowReplaysAFinishedRunAndFollowsALiveOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "log"})
		e := f.submit("log", "for i in 1 2 3; do echo line$i; done")
		f.waitTerminal(e.ID, 20*time.Second)
		texts := func(id string, after int) (out []string, end *corral.Execution) {
			end, err := f.svc.Follow(bg, id, after, func(seq int, raw []byte) error {
				var rec service.LogRecord
				json.Unmarshal(raw, &rec)
				if rec.Stream == "stdout" {
					out = append(out, rec.Text)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out, end
		}
		out, end := texts(e.ID, 0)
		if strings.Join(out, ",") != "line1,line2,line3" || end.Status != corral.StatusSucceeded {
			t.Fatalf("replay: %v %s", out, end.Status)
		}
		live := f.submit("log", "echo a; sleep 0.5; echo b")
		out, end = texts(live.ID, 0)
		if strings.Join(out, ",") != "a,b" || end.Status != corral.StatusSucceeded {
			t.Fatalf("live: %v %s", out, end.Status)
		}
	})
}

func TestSecretsAreRedactedFromLogsAndRecords(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{Secrets: []string{"service-token-123456"}})
		f.agent(corral.Agent{Name: "sec", Env: map[string]string{"API_TOKEN": "agent-secret-value-42"}})
		// A private key printed line by line: every line of its body is
		// masked in the log (kept a line at a time) and in the record.
		e := f.submit("sec", `echo "$API_TOKEN"; echo service-token-123456; echo key=sk-ant-api03-abcdefghijklmnop; echo plain
printf '%s\n' '-----BEGIN RSA PRIVATE KEY-----' MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ== '-----END RSA PRIVATE KEY-----' after-key`)
		e = f.waitTerminal(e.ID, 20*time.Second)
		log, _ := readFile(f.logPath(e.ID))
		for _, secret := range []string{"agent-secret-value-42", "service-token-123456", "sk-ant-api03-abcdefghijklmnop", "MIIBOgIBAAJBAKj34", "KUpRKfFLfRYC9AIKjbJTWit", "PRIVATE KEY"} {
			if strings.Contains(e.Stdout, secret) || strings.Contains(log, secret) {
				t.Fatalf("secret %q stored:\n%s\n%s", secret, e.Stdout, log)
			}
		}
		if !strings.Contains(e.Stdout, "plain") || !strings.Contains(log, "[REDACTED]") || !strings.Contains(e.Stdout, "[REDACTED]\nafter-key") || !strings.Contains(log, "after-key") {
			t.Fatalf("output: %q\nlog: %s", e.Stdout, log)
		}
	})
}

func TestTimeoutFailsTheRunAndKillsTheTree(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "to", Timeout: corral.Duration(300 * time.Millisecond), Grace: corral.Duration(200 * time.Millisecond)})
		e := f.submit("to", "trap '' TERM; sleep 300 & sleep 300")
		e = f.waitTerminal(e.ID, 20*time.Second)
		if e.Status != corral.StatusFailed || e.ErrorType != corral.ErrorTimeout || e.Killed == 0 {
			t.Fatalf("got %s %s killed=%d", e.Status, e.ErrorType, e.Killed)
		}
		testutil.AssertNoTagged(t, f.tag, 5*time.Second)
	})
}

func TestCloseInterruptsRunsFreesSlotsAndKeepsTheQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		tag := testutil.Tag(t)
		dir := t.TempDir()
		_, open := backend.Fresh(t, dir)
		st := open()
		svc, _ := service.New(service.Config{Store: st, DataDir: dir, Env: []string{testutil.TagEnvVar(tag)}})
		if err := svc.Start(bg); err != nil {
			t.Fatal(err)
		}
		svc.CreateAgent(bg, &corral.Agent{Name: "x", Kind: corral.KindShell, MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
		run, _ := svc.Submit(bg, service.Task{Agent: "x", Input: "sleep 300"})
		queued, _ := svc.Submit(bg, service.Task{Agent: "x", Input: "true"})
		testutil.WaitFor(t, 20*time.Second, "run started", func() bool { e, _ := svc.Execution(bg, run.ID); return e.Containment != "" })
		if err := svc.Close(bg); err != nil {
			t.Fatal(err)
		}
		testutil.AssertNoTagged(t, tag, 5*time.Second)
		e, _ := st.GetExecution(bg, run.ID)
		if e.Status != corral.StatusInterrupted {
			t.Fatalf("run after close: %s", e.Status)
		}
		q, _ := st.GetExecution(bg, queued.ID)
		if q.Status != corral.StatusRunning || q.WorkerID != "" {
			t.Fatalf("queued work after close: %s owner %q (want admitted, unclaimed)", q.Status, q.WorkerID)
		}
		// A new worker picks it up.
		svc2, _ := service.New(service.Config{Store: st, DataDir: dir, Env: []string{testutil.TagEnvVar(tag)}})
		if err := svc2.Start(bg); err != nil {
			t.Fatal(err)
		}
		defer svc2.Close(bg)
		testutil.WaitFor(t, 20*time.Second, "queued run resumed", func() bool { e, _ := svc2.Execution(bg, queued.ID); return e.Status == corral.StatusSucceeded })
	})
}

func TestScheduleFiresOnTimeAndCanBeTriggered(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "cron", MaxParallelTasks: 5})
		sc, err := f.svc.CreateSchedule(bg, &corral.Schedule{Agent: "cron", Cron: "*/2 * * * * *", TimeZone: "Europe/Paris", Input: "date +%s%N", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		first := *sc.NextFireAt
		var execs []*corral.Execution
		testutil.WaitFor(t, 15*time.Second, "two scheduled fires", func() bool {
			execs, _, _ = f.svc.Executions(bg, service.ExecutionFilter{Agent: "cron"})
			return len(execs) >= 2
		})
		for _, e := range execs {
			if e.Trigger != corral.TriggerSchedule || e.ScheduleID != sc.ID {
				t.Fatalf("execution %+v", e)
			}
		}
		oldest := execs[len(execs)-1]
		if late := oldest.CreatedAt.Sub(first); late < 0 || late > 3*time.Second {
			t.Fatalf("first fire due %v, created %v (%v late)", first, oldest.CreatedAt, late)
		}
		sc.Enabled = false
		if _, err := f.svc.UpdateSchedule(bg, sc); err != nil {
			t.Fatal(err)
		}
		e, err := f.svc.TriggerSchedule(bg, sc.ID)
		if err != nil || e.Trigger != corral.TriggerSchedule {
			t.Fatalf("manual trigger: %v %+v", err, e)
		}
		for _, bad := range []corral.Schedule{{Agent: "cron", Cron: "nope", Input: "x"}, {Agent: "cron", Cron: "* * * * *", TimeZone: "Nowhere/Land", Input: "x"}, {Agent: "cron", Cron: "* * * * *"}, {Agent: "ghost", Cron: "* * * * *", Input: "x"}} {
			if _, err := f.svc.CreateSchedule(bg, &bad); err == nil {
				t.Errorf("schedule %+v accepted", bad)
			}
		}
		all, _, _ := f.svc.Executions(bg, service.ExecutionFilter{Agent: "cron", Limit: 100})
		for _, e := range all {
			f.waitTerminal(e.ID, 20*time.Second)
		}
	})
}

func TestInvalidInputIsRefusedWithAClearError(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "v"})
		for _, task := range []service.Task{{Agent: "v"}, {Agent: "v", Input: "x", Timeout: -1}, {Agent: "v", Input: "\xff"}} {
			if _, err := f.svc.Submit(bg, task); !errors.Is(err, service.ErrInvalid) {
				t.Errorf("%+v: %v", task, err)
			}
		}
		if _, err := f.svc.Submit(bg, service.Task{Agent: "ghost", Input: "x"}); !errors.Is(err, service.ErrNotFound) {
			t.Errorf("unknown agent: %v", err)
		}
		for _, a := range []corral.Agent{{Name: "", Kind: "shell"}, {Name: "a b", Kind: "shell"}, {Name: "k", Kind: "robot"}, {Name: "h", Kind: "headless"}, {Name: "o", Kind: "shell", Overflow: "drop"}, {Name: "m", Kind: "shell", MaxParallelTasks: -1}} {
			if _, err := f.svc.CreateAgent(bg, &a); !errors.Is(err, service.ErrInvalid) {
				t.Errorf("agent %+v: %v", a, err)
			}
		}
	})
}

// fakeAgent is a headless agent that speaks Claude Code's stream-json: it
// reports its session, leaves a background child holding its stdout, and
// ends its turn with a result line, then lingers.
const fakeAgent = `echo '{"type":"system","subtype":"init","session_id":"sess-1","permissionMode":"default"}'
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"looking around"},{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls"}}]}}'
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"ok"}]}}'
sleep 300 &
echo "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"did $1\",\"num_turns\":3,\"total_cost_usd\":0.25,\"session_id\":\"sess-1\",\"usage\":{\"input_tokens\":5,\"output_tokens\":7}}"
sleep 300`

func TestHeadlessTurnEndsOnItsResultAndFreesTheSlot(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "bot", Kind: corral.KindHeadless, MaxParallelTasks: 1, Command: []string{"bash", "-c", fakeAgent, "agent", "{{prompt}}"}})
		start := time.Now()
		e := f.submit("bot", "the thing")
		e = f.waitTerminal(e.ID, 30*time.Second)
		if took := time.Since(start); took > 15*time.Second {
			t.Fatalf("turn took %v: it waited for the process instead of the result", took)
		}
		if e.Status != corral.StatusSucceeded || e.Result != "did the thing" || e.SessionID != "sess-1" || e.NumTurns != 3 || e.CostUSD != 0.25 || e.FinalizedBy != "result" || len(e.Usage) == 0 {
			t.Fatalf("turn record: %+v", e)
		}
		if slots, _ := f.svc.Slots(bg, "bot"); len(slots) != 0 {
			t.Fatalf("slot still held: %+v", slots)
		}
		log, _ := readFile(f.logPath(e.ID))
		if !strings.Contains(log, `"stream":"event"`) || !strings.Contains(log, "did the thing") {
			t.Fatalf("events not logged:\n%s", log)
		}
		// Each stream line is logged once, however many events it makes.
		if n := strings.Count(log, `\"subtype\":\"init\"`); n != 1 {
			t.Fatalf("the init line is logged %d times:\n%s", n, log)
		}
		if n := strings.Count(log, "looking around"); n != 1 {
			t.Fatalf("a line of two events is logged %d times:\n%s", n, log)
		}
		if n := strings.Count(log, "did the thing"); n != 1 {
			t.Fatalf("the result line is logged %d times:\n%s", n, log)
		}
		testutil.AssertNoTagged(t, f.tag, 10*time.Second)
	})
}

func TestHeadlessIdleWatchdogFailsASilentTurnAndKeepsTheSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		silent := `echo '{"type":"system","subtype":"init","session_id":"sess-2"}'; sleep 300`
		// The idle limit also bounds the turn's start before its first
		// line (a guarded run's init, then bash): 500 ms was once too
		// little for it in a full suite on a loaded 2-core machine.
		f.agent(corral.Agent{Name: "mute", Kind: corral.KindHeadless, IdleTimeout: corral.Duration(3 * time.Second), Grace: corral.Duration(200 * time.Millisecond), Command: []string{"bash", "-c", silent}})
		e := f.waitTerminal(f.submit("mute", "hello").ID, 30*time.Second)
		if e.Status != corral.StatusFailed || e.ErrorType != corral.ErrorIdle || e.SessionID != "sess-2" {
			t.Fatalf("silent turn: %s %s session %q (%s)", e.Status, e.ErrorType, e.SessionID, e.Error)
		}
	})
}

func TestHeadlessCancelStopsTheTurn(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "long", Kind: corral.KindHeadless, Command: []string{"bash", "-c", `echo '{"type":"system","subtype":"init","session_id":"s3"}'; sleep 300 & sleep 300`}})
		e := f.submit("long", "x")
		testutil.WaitFor(t, 20*time.Second, "turn started", func() bool { return f.get(e.ID).SessionID == "s3" })
		f.svc.Cancel(bg, e.ID)
		if e = f.waitTerminal(e.ID, 30*time.Second); e.Status != corral.StatusCancelled || e.SessionID != "s3" {
			t.Fatalf("cancelled turn: %s %s", e.Status, e.SessionID)
		}
	})
}

// TestMissedFiresAreSkippedOrRunOnce moves the scheduler's clock five
// hours ahead, as if the service had been down: the skip schedule drops
// its five missed fires, the run_once schedule runs its task once.
func TestMissedFiresAreSkippedOrRunOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		var offset atomic.Int64
		clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		f := newFixture(t, backend, service.Config{Now: clock})
		f.agent(corral.Agent{Name: "m", MaxParallelTasks: 5})
		skip, err := f.svc.CreateSchedule(bg, &corral.Schedule{Agent: "m", Cron: "@hourly", Input: "echo skip", Enabled: true, Missed: corral.MissedSkip})
		if err != nil {
			t.Fatal(err)
		}
		once, err := f.svc.CreateSchedule(bg, &corral.Schedule{Agent: "m", Cron: "@hourly", Input: "echo once", Enabled: true, Missed: corral.MissedRunOnce})
		if err != nil {
			t.Fatal(err)
		}
		offset.Store(int64(5*time.Hour + 10*time.Minute))
		later := clock()
		var got *corral.Schedule
		testutil.WaitFor(t, 10*time.Second, "both schedules moved past the outage", func() bool {
			a, _ := f.svc.Schedule(bg, skip.ID)
			got, _ = f.svc.Schedule(bg, once.ID)
			return a.NextFireAt.After(later) && got.NextFireAt.After(later)
		})
		list, _, _ := f.svc.Executions(bg, service.ExecutionFilter{Agent: "m"})
		if len(list) != 1 || list[0].ScheduleID != once.ID || got.LastExecution != list[0].ID {
			t.Fatalf("after the outage: %d executions %+v, want one of the run_once schedule", len(list), list)
		}
		if e := f.waitTerminal(list[0].ID, 20*time.Second); e.Stdout != "once\n" {
			t.Fatalf("run_once run: %+v", e)
		}
	})
}

// TestTwoWorkersShareADatabaseWithoutOverbookingAndCancelAcross runs two
// services on one database file, as two processes would: submissions to
// both never exceed the agent's capacity, and a cancel sent to one worker
// stops a run owned by the other.
func TestTwoWorkersShareADatabaseWithoutOverbookingAndCancelAcross(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		testutil.CheckFDs(t)
		tag := testutil.Tag(t)
		dir := t.TempDir()
		var svcs []*service.Service
		_, open := backend.Fresh(t, dir)
		for i := range 2 {
			svc, _ := service.New(service.Config{Store: open(), DataDir: dir, WorkerID: fmt.Sprint("w", i), Env: []string{testutil.TagEnvVar(tag)}})
			if err := svc.Start(bg); err != nil {
				t.Fatal(err)
			}
			svcs = append(svcs, svc)
			t.Cleanup(func() { svc.Close(bg) })
		}
		if _, err := svcs[0].CreateAgent(bg, &corral.Agent{Name: "shared", Kind: corral.KindShell, MaxParallelTasks: 3, Overflow: corral.OverflowQueue, MaxBacklog: 100}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		running := 0
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := svcs[i%2].Submit(bg, service.Task{Agent: "shared", Input: "sleep 0.05"})
				if err != nil {
					t.Error(err)
					return
				}
				if e.Status == corral.StatusRunning {
					mu.Lock()
					running++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if running != 3 {
			t.Fatalf("%d admitted at once by two workers, capacity 3", running)
		}
		workers := map[string]bool{}
		testutil.WaitFor(t, 60*time.Second, "40 runs done, never more than 3 at once", func() bool {
			slots, _ := svcs[1].Slots(bg, "shared")
			if len(slots) > 3 {
				t.Fatalf("%d slots held", len(slots))
			}
			list, _, _ := svcs[0].Executions(bg, service.ExecutionFilter{Agent: "shared", Statuses: []corral.Status{corral.StatusSucceeded}, Limit: 100})
			for _, e := range list {
				workers[e.WorkerID] = true
			}
			return len(list) == 40
		})
		t.Logf("runs taken by workers %v", workers)

		long, _ := svcs[0].Submit(bg, service.Task{Agent: "shared", Input: "sleep 300"})
		var owner string
		testutil.WaitFor(t, 20*time.Second, "long run started", func() bool {
			e, _ := svcs[0].Execution(bg, long.ID)
			owner = e.WorkerID
			return e.Containment != ""
		})
		other := svcs[0]
		if owner == "w0" {
			other = svcs[1]
		}
		if _, err := other.Cancel(bg, long.ID); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 20*time.Second, "cancel reaching the owning worker", func() bool {
			e, _ := other.Execution(bg, long.ID)
			return e.Status == corral.StatusCancelled
		})
		testutil.AssertNoTagged(t, tag, 5*time.Second)
	})
}
