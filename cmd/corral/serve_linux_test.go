package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
)

var bg = context.Background()

func createAgent(t *testing.T, c *client.Client, a *client.Agent) {
	t.Helper()
	if a.Kind == "" {
		a.Kind = corral.KindShell
	}
	if _, err := c.CreateAgent(bg, a); err != nil {
		t.Fatal(err)
	}
}

func waitTerminal(t *testing.T, c *client.Client, id string, timeout time.Duration) *client.Execution {
	t.Helper()
	var e *client.Execution
	testutil.WaitFor(t, timeout, "execution "+id+" to finish", func() bool {
		var err error
		e, err = c.Execution(bg, id)
		return err == nil && e.Status.Terminal()
	})
	return e
}

func TestServeStartsWithNoConfigurationAndMakesAPrivateToken(t *testing.T) {
	tag := testutil.Tag(t)
	data := filepath.Join(t.TempDir(), "fresh", "corral")
	s := startServe(t, data, tag)
	st, err := os.Stat(filepath.Join(data, "token"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	if !strings.Contains(s.log(), s.token) {
		t.Fatalf("token not printed on first start:\n%s", s.log())
	}
	if err := client.New(s.addr, "").Health(bg); err != nil {
		t.Fatalf("healthz without a token: %v", err)
	}
	s.stop()
	s2 := startServe(t, data, tag)
	if strings.Contains(s2.log(), s2.token) || s2.token != s.token {
		t.Fatal("token printed again or changed on the second start")
	}
	s2.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

func TestServeRefusesANonLoopbackAddressWithoutAToken(t *testing.T) {
	tag := testutil.Tag(t)
	for _, args := range [][]string{
		{"serve", "--addr", "0.0.0.0:0", "--insecure-no-auth", "--data", t.TempDir()},
		{"serve", "--addr", "[::]:0", "--insecure-no-auth", "--data", t.TempDir()},
	} {
		s := &served{t: t, tag: tag}
		_, stderr, code := s.cli(args...)
		if code == 0 || !strings.Contains(stderr, "refusing to serve") {
			t.Fatalf("%v: exit %d, %q", args, code, stderr)
		}
	}
	// A data directory, token and database left readable by others are
	// made private before anything is served.
	data := t.TempDir()
	os.Chmod(data, 0o755)
	os.WriteFile(filepath.Join(data, "token"), []byte("0123456789abcdef\n"), 0o644)
	os.WriteFile(filepath.Join(data, "corral.db"), nil, 0o644)
	os.Mkdir(filepath.Join(data, "logs"), 0o755)
	old := syscall.Umask(0)
	os.Chmod(filepath.Join(data, "token"), 0o644)
	syscall.Umask(old)
	s := startServe(t, data, tag)
	if _, err := s.c.Agents(bg); err != nil {
		t.Fatalf("the token was not kept: %v", err)
	}
	createAgent(t, s.c, &client.Agent{Name: "keeps-secrets", Env: map[string]string{"API_KEY": "x"}})
	for _, name := range []string{".", "token", "corral.db", "corral.db-wal", "corral.db-shm", "logs", "runs"} {
		fi, err := os.Stat(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
}

func TestEveryRouteButHealthzNeedsTheToken(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	createAgent(t, s.c, &client.Agent{Name: "a"})
	routes := [][2]string{
		{"GET", "/metrics"}, {"GET", "/v1/agents"}, {"POST", "/v1/agents"}, {"GET", "/v1/agents/a"}, {"PATCH", "/v1/agents/a"},
		{"DELETE", "/v1/agents/a"}, {"POST", "/v1/agents/a/tasks"}, {"GET", "/v1/agents/a/slots"}, {"GET", "/v1/agents/a/schedules"}, {"GET", "/v1/schedules"},
		{"POST", "/v1/agents/a/schedules"}, {"GET", "/v1/agents/a/schedules/x"}, {"PATCH", "/v1/agents/a/schedules/x"},
		{"DELETE", "/v1/agents/a/schedules/x"}, {"POST", "/v1/agents/a/schedules/x/trigger"}, {"GET", "/v1/executions"},
		{"GET", "/v1/executions/x"}, {"POST", "/v1/executions/x/cancel"}, {"POST", "/v1/executions/x/retry"},
		{"GET", "/v1/executions/x/events"}, {"GET", "/v1/nothing"}, {"GET", "/"},
	}
	for _, r := range routes {
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + s.token + "x", "Basic " + s.token, s.token} {
			req, _ := http.NewRequest(r[0], "http://"+s.addr+r[1], strings.NewReader(`{"input":"true"}`))
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			// 429: the address guessed wrong too often and is held back.
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("%s %s with %q: %d, want 401 (or 429)", r[0], r[1], auth, resp.StatusCode)
			}
		}
	}
	resp, err := http.Get("http://" + s.addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	// 127.0.0.1 guessed wrong for long enough to be held back, even with
	// the right token; another address that never failed is not.
	if _, err := s.c.Agents(bg); err == nil || !strings.Contains(err.Error(), "too many wrong tokens") {
		t.Fatalf("the guessing address is not held back: %v", err)
	}
	clean := client.New(s.addr, s.token)
	clean.HTTP = &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	defer clean.HTTP.CloseIdleConnections()
	if list, _, err := clean.Executions(bg, client.ListOptions{}); err != nil || len(list) != 0 {
		t.Fatalf("an unauthenticated request had an effect: %v %v", list, err)
	}
	s.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

// TestAdmissionUnder200ConcurrentSubmissionsNeverExceedsCapacity samples
// the running count throughout: from the slots the API reports and from
// the processes themselves (each run holds a file while it lives).
func TestAdmissionUnder200ConcurrentSubmissionsNeverExceedsCapacity(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	loadCapacity(t, []*client.Client{s.c}, 4, 200, "0.02", 3*time.Minute)
	s.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

// loadCapacity creates agent "q" with the given capacity and a queue, sends
// total concurrent submissions spread over the clients (each run holds a
// file while it lives, for the given sleep) and waits until all of them
// have succeeded. Throughout, it samples the running count as the
// processes see it (the files) and as the service reports it (the slots,
// asked of each client in turn), and fails if either ever exceeds the
// capacity or never reaches two. It returns the finished executions.
func loadCapacity(t *testing.T, cs []*client.Client, capacity, total int, sleep string, timeout time.Duration) []*client.Execution {
	t.Helper()
	createAgent(t, cs[0], &client.Agent{Name: "q", MaxParallelTasks: capacity, Overflow: corral.OverflowQueue, MaxBacklog: 1000})
	live := t.TempDir()
	task := fmt.Sprintf(`f=$(mktemp -p %s); sleep %s; rm -f "$f"`, live, sleep)

	var maxFiles, maxSlots, samples atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the processes' own account
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ents, _ := os.ReadDir(live)
			if n := int64(len(ents)); n > maxFiles.Load() {
				maxFiles.Store(n)
			}
			samples.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	go func() { // the service's account
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, slots, err := cs[i%len(cs)].Slots(bg, "q"); err == nil && int64(len(slots)) > maxSlots.Load() {
				maxSlots.Store(int64(len(slots)))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var sub sync.WaitGroup
	errs := make(chan error, total)
	for i := range total {
		sub.Add(1)
		go func() {
			defer sub.Done()
			if _, err := cs[i%len(cs)].Submit(bg, "q", task, 0); err != nil {
				errs <- err
			}
		}()
	}
	sub.Wait()
	close(errs)
	for err := range errs {
		close(stop)
		wg.Wait()
		t.Fatalf("submission refused: %v", err)
	}
	var done []*client.Execution
	testutil.WaitFor(t, timeout, fmt.Sprint(total, " runs succeeding"), func() bool {
		list, _, err := cs[len(cs)-1].Executions(bg, client.ListOptions{Agent: "q", Statuses: []corral.Status{corral.StatusSucceeded}, Limit: 1000})
		done = list
		return err == nil && len(list) == total
	})
	close(stop)
	wg.Wait()
	t.Logf("max running: %d by processes, %d by slots, over %d samples", maxFiles.Load(), maxSlots.Load(), samples.Load())
	if maxFiles.Load() > int64(capacity) || maxSlots.Load() > int64(capacity) {
		t.Fatalf("capacity %d exceeded: %d processes, %d slots at once", capacity, maxFiles.Load(), maxSlots.Load())
	}
	if maxSlots.Load() < 2 {
		t.Fatalf("never more than %d at once: the test did not exercise concurrency", maxSlots.Load())
	}
	return done
}

func TestRejectPolicyAdmitsExactlyCapacityAndAnswers429(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	createAgent(t, s.c, &client.Agent{Name: "r", MaxParallelTasks: 3})
	var accepted []string
	var rejected atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := s.c.Submit(bg, "r", "sleep 60", 0)
			switch {
			case err == nil:
				mu.Lock()
				accepted = append(accepted, e.ID)
				mu.Unlock()
			case client.IsAtCapacity(err):
				var ae *client.Error
				errors.As(err, &ae)
				if ae.Message != "agent at capacity (3/3 parallel tasks running)" || ae.Execution == nil || ae.Execution.Status != corral.StatusRejected {
					t.Errorf("rejection: %q %+v", ae.Message, ae.Execution)
				}
				rejected.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(accepted) != 3 || rejected.Load() != 197 {
		t.Fatalf("%d accepted, %d rejected; want 3 and 197", len(accepted), rejected.Load())
	}
	list, _, _ := s.c.Executions(bg, client.ListOptions{Agent: "r", Statuses: []corral.Status{corral.StatusRejected}, Limit: 1000})
	if len(list) != 197 {
		t.Fatalf("%d rejections recorded, want 197", len(list))
	}
	for _, id := range accepted {
		if _, err := s.c.Cancel(bg, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range accepted {
		if e := waitTerminal(t, s.c, id, 30*time.Second); e.Status != corral.StatusCancelled {
			t.Fatalf("%s: %s", id, e.Status)
		}
	}
	metrics, _ := s.c.Metrics(bg)
	for _, want := range []string{`corral_rejections_total{agent="r"} 197`, `corral_slots_used{agent="r"} 0`, `corral_executions{agent="r",status="cancelled"} 3`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	s.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

// TestKill9RecoveryInterruptsRunsKillsTreesAndResumesQueue kills the
// service with runs in flight, together with what binds their trees to it
// (so that the trees outlive it), restarts it, and proves the runs are
// interrupted with their output salvaged, their trees (escapees included)
// are gone, their slots are free, the queue resumes and nothing is lost.
func TestKill9RecoveryInterruptsRunsKillsTreesAndResumesQueue(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	// Unguarded: a guarded run's tree is a pid namespace, which dies with
	// its init, and leaves nothing to reclaim.
	a := startServe(t, data, tag, "--task-guard", "off")
	createAgent(t, a.c, &client.Agent{Name: "w", MaxParallelTasks: 2, Overflow: corral.OverflowQueue, MaxBacklog: 10})
	before, err := a.c.Submit(bg, "w", "echo finished-before", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := waitTerminal(t, a.c, before.ID, 30*time.Second); e.Status != corral.StatusSucceeded {
		t.Fatalf("first run: %s", e.Status)
	}
	var running, queued []string
	for i := range 2 {
		// A background job, a setsid escapee and a TERM-ignoring child.
		e, err := a.c.Submit(bg, "w", fmt.Sprintf(`echo started-%d; sleep 300 & setsid sleep 300 & (trap "" TERM; sleep 300) & sleep 300`, i), 0)
		if err != nil || e.Status != corral.StatusRunning {
			t.Fatalf("long run %d: %v %v", i, e, err)
		}
		running = append(running, e.ID)
	}
	for i := range 3 {
		e, err := a.c.Submit(bg, "w", fmt.Sprintf("echo resumed-%d", i), 0)
		if err != nil || e.Status != corral.StatusQueued {
			t.Fatalf("queued %d: %v %v", i, e, err)
		}
		queued = append(queued, e.ID)
	}
	testutil.WaitFor(t, 30*time.Second, "both trees started and logged", func() bool {
		for i, id := range running {
			// The worker's run file is written with the handle.
			if _, err := os.Stat(filepath.Join(data, "runs", id+".json")); err != nil {
				return false
			}
			// A line reaches the log within runlog.FlushDelay of being
			// read; what a kill -9 finds unwritten is lost with the
			// service, so the test waits for the line to be written.
			log, err := os.ReadFile(filepath.Join(data, "logs", id+".jsonl"))
			if err != nil || !strings.Contains(string(log), fmt.Sprintf("started-%d", i)) {
				return false
			}
		}
		return len(taggedExcept(tag, a.pid())) >= 6
	})
	a.crash()
	if n := len(taggedExcept(tag, -1)); n < 6 {
		t.Fatalf("only %d processes outlived the service: the test proves nothing", n)
	}

	b := startServe(t, data, tag)
	for i, id := range running {
		e := waitTerminal(t, b.c, id, 30*time.Second)
		if e.Status != corral.StatusInterrupted || e.ErrorType != corral.ErrorInterrupted || e.Reclaimed == 0 {
			t.Fatalf("run %s after recovery: %s %s reclaimed=%d %q", id, e.Status, e.ErrorType, e.Reclaimed, e.Error)
		}
		if !strings.Contains(e.Stdout, fmt.Sprintf("started-%d", i)) {
			t.Fatalf("output not salvaged: %q", e.Stdout)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "the dead service's trees gone", func() bool {
		for _, st := range taggedExcept(tag, b.pid()) {
			if !strings.Contains(procCmdline(st.Pid), "echo resumed") {
				return false
			}
		}
		return true
	})
	for i, id := range queued {
		e := waitTerminal(t, b.c, id, 30*time.Second)
		if e.Status != corral.StatusSucceeded || e.Stdout != fmt.Sprintf("resumed-%d\n", i) {
			t.Fatalf("queued run %s: %s %q", id, e.Status, e.Stdout)
		}
	}
	if _, slots, _ := b.c.Slots(bg, "w"); len(slots) != 0 {
		t.Fatalf("slots held after everything ended: %+v", slots)
	}
	all, _, _ := b.c.Executions(bg, client.ListOptions{Agent: "w", Limit: 100})
	if len(all) != 6 {
		t.Fatalf("%d executions recorded, want 6", len(all))
	}
	if e, _ := b.c.Execution(bg, before.ID); e.Status != corral.StatusSucceeded || e.Stdout != "finished-before\n" {
		t.Fatalf("finished run lost: %+v", e)
	}
	metrics, _ := b.c.Metrics(bg)
	if !strings.Contains(metrics, "corral_escapees_killed_total") || strings.Contains(metrics, "corral_escapees_killed_total 0\n") {
		t.Errorf("escapees not counted:\n%s", metrics)
	}
	b.stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// TestKill9ServiceTakesItsTreesWithIt is guarantee 7 for the service:
// killed with SIGKILL, it leaves no process of its runs after a second,
// escapees included; on restart the runs are recorded interrupted and
// their slots are free.
func TestKill9ServiceTakesItsTreesWithIt(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	a := startServe(t, data, tag)
	createAgent(t, a.c, &client.Agent{Name: "w", MaxParallelTasks: 2})
	var running []string
	for i := range 2 {
		e, err := a.c.Submit(bg, "w", fmt.Sprintf(`echo started-%d; sleep 300 & setsid sleep 300 & (trap "" TERM; sleep 300) & sleep 300`, i), 0)
		if err != nil || e.Status != corral.StatusRunning {
			t.Fatalf("long run %d: %v %v", i, e, err)
		}
		running = append(running, e.ID)
	}
	testutil.WaitFor(t, 30*time.Second, "both trees started", func() bool { return len(taggedExcept(tag, a.pid())) >= 8 })
	clock := testutil.StartSchedClock()
	a.kill9()
	killed := time.Now()
	testutil.WaitFor(t, 30*time.Second, "the trees to die with the service", func() bool { return len(taggedExcept(tag, -1)) == 0 })
	if took := time.Since(killed); took > time.Second+clock.Waited() {
		t.Errorf("the trees took %v to go after the service's death (%v of CPU starvation)", took, clock.Waited())
	}
	b := startServe(t, data, tag)
	for _, id := range running {
		if e := waitTerminal(t, b.c, id, 30*time.Second); e.Status != corral.StatusInterrupted {
			t.Fatalf("run %s after the restart: %s", id, e.Status)
		}
	}
	if _, slots, _ := b.c.Slots(bg, "w"); len(slots) != 0 {
		t.Fatalf("slots held: %+v", slots)
	}
	b.stop()
}

func procCmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

func TestEventsReplayAfterCompletionAndFollowLive(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	createAgent(t, s.c, &client.Agent{Name: "ev", MaxParallelTasks: 1})
	e, _ := s.c.Submit(bg, "ev", "for i in $(seq 1 50); do echo line $i; done; echo err >&2", 0)
	waitTerminal(t, s.c, e.ID, 30*time.Second)
	seqOf := map[string]int{}
	collect := func(id string, after int, live bool) ([]string, *client.Execution) {
		var lines []string
		end, err := s.c.Follow(bg, id, after, live, func(ev client.Event) error {
			if ev.Record != nil && ev.Record.Stream == "stdout" {
				lines = append(lines, ev.Record.Text)
				seqOf[ev.Record.Text] = ev.Record.Seq
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return lines, end
	}
	lines, end := collect(e.ID, 0, true)
	if len(lines) != 50 || lines[0] != "line 1" || lines[49] != "line 50" || end.Status != corral.StatusSucceeded || !strings.Contains(end.Stderr, "err") {
		t.Fatalf("replay after completion: %d lines %v, end %v", len(lines), lines, end.Status)
	}
	if lines, _ = collect(e.ID, seqOf["line 11"]-1, true); len(lines) != 40 || lines[0] != "line 11" {
		t.Fatalf("replay from line 11: %d %v", len(lines), lines)
	}
	live, _ := s.c.Submit(bg, "ev", "echo a; sleep 1; echo b", 0)
	lines, end = collect(live.ID, 0, true)
	if strings.Join(lines, ",") != "a,b" || end.Status != corral.StatusSucceeded {
		t.Fatalf("live: %v %s", lines, end.Status)
	}
	// A rejected execution never ran: its stream ends at once, no 404.
	blocker, _ := s.c.Submit(bg, "ev", "sleep 60", 0)
	_, err := s.c.Submit(bg, "ev", "true", 0)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Execution == nil {
		t.Fatalf("expected a rejection: %v", err)
	}
	if lines, end = collect(ae.Execution.ID, 0, true); len(lines) != 0 || end.Status != corral.StatusRejected {
		t.Fatalf("rejected: %v %v", lines, end)
	}
	// Raw SSE framing: ids on log events, an end event last.
	req, _ := http.NewRequest("GET", "http://"+s.addr+"/v1/executions/"+e.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Last-Event-ID", strconv.Itoa(seqOf["line 50"]-1))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(string(body), fmt.Sprintf("id: %d\nevent: log\n", seqOf["line 50"])) || !strings.HasSuffix(strings.TrimSpace(string(body)), "}") || !strings.Contains(string(body), "event: end\n") {
		t.Fatalf("SSE framing:\n%s", body)
	}
	s.c.Cancel(bg, blocker.ID)
	waitTerminal(t, s.c, blocker.ID, 30*time.Second)
	s.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

func TestBadRequestsGetAClear4xx(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	createAgent(t, s.c, &client.Agent{Name: "b"})
	cases := []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/v1/agents", `{"name":"x","kind":"robot"}`, 400},
		{"POST", "/v1/agents", `{"name":"b","kind":"shell"}`, 409},
		{"POST", "/v1/agents", `{"name":"x","kind":"shell","bogus":1}`, 400},
		{"POST", "/v1/agents", `not json`, 400},
		{"POST", "/v1/agents", ``, 400},
		{"POST", "/v1/agents", `{"name":"x","kind":"shell"} {}`, 400},
		{"POST", "/v1/agents", `{"name":"x","kind":"shell","timeout":"soon"}`, 400},
		{"POST", "/v1/agents", `{"name":"x","kind":"shell","max_parallel_tasks":"3"}`, 400},
		{"PATCH", "/v1/agents/b", `{"name":"other"}`, 400},
		{"PATCH", "/v1/agents/b", `{"overflow":"drop"}`, 400},
		{"PATCH", "/v1/agents/ghost", `{}`, 404},
		{"POST", "/v1/agents/b/tasks", `{"input":""}`, 400},
		{"POST", "/v1/agents/b/tasks", `{"input":"x","timeout":"-1s"}`, 400},
		{"POST", "/v1/agents/ghost/tasks", `{"input":"x"}`, 404},
		{"POST", "/v1/agents/b/tasks", `{"input":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
		{"GET", "/v1/executions?status=weird", ``, 400},
		{"GET", "/v1/executions?limit=0", ``, 400},
		{"GET", "/v1/executions?since=yesterday", ``, 400},
		{"GET", "/v1/executions?cursor=bogus", ``, 400},
		{"GET", "/v1/executions/nope", ``, 404},
		{"GET", "/v1/executions/nope/events", ``, 404},
		{"POST", "/v1/executions/nope/cancel", ``, 404},
		{"POST", "/v1/agents/b/schedules", `{"cron":"every day","input":"x"}`, 400},
		{"POST", "/v1/agents/b/schedules", `{"cron":"* * * * *","input":"x","time_zone":"Mars/Base"}`, 400},
		{"GET", "/v1/agents/b/schedules/nope", ``, 404},
		{"DELETE", "/v1/agents/ghost", ``, 404},
		{"PUT", "/v1/agents/b", `{}`, 404},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, "http://"+s.addr+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+s.token)
		if tc.method != "GET" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || body.Error.Message == "" {
			t.Errorf("%s %s %.60q: %d %q, want %d with a message", tc.method, tc.path, tc.body, resp.StatusCode, body.Error.Message, tc.want)
		}
	}
	s.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}
