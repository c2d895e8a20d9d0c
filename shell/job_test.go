package shell

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

func TestJobOutputIsReadIncrementally(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	run(t, s, "export WHO=session; cd /")
	res, err := s.Start(context.Background(), Request{Command: `pwd; for i in 1 2 3; do echo "line$i $WHO"; sleep 0.1; done; echo err >&2; exit 5`})
	if err != nil || res.JobID == "" {
		t.Fatal(err, res)
	}
	j, ok := s.Job(res.JobID)
	if !ok {
		t.Fatal("job not found")
	}
	var all strings.Builder
	next := int64(0)
	for i := 0; i < 100; i++ {
		o := j.Output(context.Background(), -1, 2*time.Second, 0)
		if o.Since != next {
			t.Fatalf("read from %d, want %d", o.Since, next)
		}
		all.WriteString(o.Output)
		next = o.Next
		if o.Status != "running" && o.Next == int64(len(all.String())) {
			if o.ExitCode == nil || *o.ExitCode != 5 {
				t.Errorf("exit %v", o.ExitCode)
			}
			break
		}
	}
	if want := "/\nline1 session\nline2 session\nline3 session\nerr\n"; all.String() != want {
		t.Errorf("read %q, want %q", all.String(), want)
	}
	// Reading again from 0 gives the whole output; the log has it too.
	if o := j.Output(context.Background(), 0, 0, 0); !strings.HasPrefix(o.Output, "/\nline1") {
		t.Errorf("reread %q", o.Output)
	}
	log, _ := os.ReadFile(j.Info().LogPath)
	if string(log) != all.String() {
		t.Errorf("log %q", log)
	}
	if got := run(t, s, "pwd"); got.Stdout != "/\n" {
		t.Errorf("job changed the session: %q", got.Stdout)
	}
}

func TestJobKillEndsItsWholeTree(t *testing.T) {
	tool, tag := newTool(t)
	s := newSession(t, tool)
	res, err := s.Start(context.Background(), Request{Command: "(setsid sleep 300 &); sleep 300 & echo up; wait"})
	if err != nil {
		t.Fatal(err)
	}
	j, _ := s.Job(res.JobID)
	o := j.Output(context.Background(), 0, 5*time.Second, 0)
	if o.Output != "up\n" {
		t.Fatalf("got %+v", o)
	}
	start := time.Now()
	info := j.Kill()
	if info.Status != "killed" || time.Since(start) > 4*time.Second {
		t.Errorf("after %v: %+v", time.Since(start), info)
	}
	testutil.AssertNoTagged(t, tag, 2*time.Second)
	if l := s.Jobs(); len(l) != 1 || l[0].Status != "killed" {
		t.Errorf("jobs %+v", l)
	}
}

// The peer left background jobs running after the session closed.
func TestSessionCloseKillsBackgroundJobs(t *testing.T) {
	tool, tag := newTool(t)
	s, err := tool.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"sleep 300", "(setsid nohup sleep 300 >/dev/null 2>&1 &); sleep 300", "python3 -c 'import time; time.sleep(300)' 2>/dev/null || sleep 300"} {
		if res, err := s.Start(context.Background(), Request{Command: cmd}); err != nil || res.JobID == "" {
			t.Fatal(err, res)
		}
	}
	testutil.WaitFor(t, 5*time.Second, "jobs running", func() bool { return len(testutil.Tagged(tag)) >= 4 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.AssertNoTagged(t, tag, 2*time.Second)
	if _, err := s.Start(context.Background(), Request{Command: "true"}); err != ErrClosed {
		t.Errorf("start after close: %v", err)
	}
}

func TestToolCloseKillsItsJobs(t *testing.T) {
	tool, tag := newTool(t)
	res, err := tool.Start(context.Background(), Request{Command: "sleep 300"})
	if err != nil || res.JobID == "" {
		t.Fatal(err, res)
	}
	if l := tool.Jobs(); len(l) != 1 || l[0].Status != "running" {
		t.Errorf("jobs %+v", l)
	}
	tool.Close()
	testutil.AssertNoTagged(t, tag, 2*time.Second)
}

func TestJobsAreLimited(t *testing.T) {
	tool, _ := newTool(t)
	tool.MaxJobs = 1
	if _, err := tool.Start(context.Background(), Request{Command: "sleep 300"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Start(context.Background(), Request{Command: "sleep 300"}); err != ErrTooManyJobs {
		t.Errorf("second job: %v", err)
	}
}
