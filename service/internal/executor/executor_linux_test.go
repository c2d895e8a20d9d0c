package executor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service/internal/executor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run runs input with a shell agent under pol and returns the result and
// everything the run printed.
func run(t *testing.T, pol *executor.Policy, a corral.Agent, input string, onStart func(proc.Handle)) (*corral.Outcome, string) {
	t.Helper()
	tag := testutil.Tag(t)
	if a.Name == "" {
		a.Name = "probe"
	}
	if a.Kind == "" {
		a.Kind = corral.KindShell
	}
	var mu sync.Mutex
	var out strings.Builder
	j := &executor.Job{
		Agent:     &a,
		Execution: &corral.Execution{ID: "exec-test", Input: input},
		Env:       []string{testutil.TagEnvVar(tag)},
		Timeout:   time.Minute,
		Stop:      make(chan struct{}),
		MaxOutput: 1 << 20,
		OnStart:   onStart,
		OnLine: func(stream string, line []byte) {
			mu.Lock()
			fmt.Fprintf(&out, "%s\n", line)
			mu.Unlock()
		},
	}
	var ex executor.Executor = executor.Shell{Policy: pol}
	if a.Kind == corral.KindHeadless {
		ex = executor.Headless{Policy: pol}
	}
	res := ex.Run(context.Background(), j)
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	mu.Lock()
	defer mu.Unlock()
	return res, out.String()
}

// TestRunSeesOnlyItsExplicitEnvironment: a task gets the base, what is
// passed on by name and its agent's env; none of the service's own
// variables, its token least of all.
func TestRunSeesOnlyItsExplicitEnvironment(t *testing.T) {
	const token = "tok-0123456789abcdef-secret"
	t.Setenv("CORRAL_TOKEN", token)
	t.Setenv("SERVICE_ONLY_SECRET", "hunter2-of-the-service")
	t.Setenv("PASS_ME", "passed-by-name")
	t.Setenv("AGENT_PASS", "passed-for-the-agent")
	t.Setenv("TZ", "Europe/Paris")
	pol := &executor.Policy{PassEnv: []string{"PASS_ME", "NOT_SET_ANYWHERE"}, Secrets: []string{token}}
	res, out := run(t, pol, corral.Agent{Env: map[string]string{"AGENT_KEY": "from-the-agent"}, PassEnv: []string{"AGENT_PASS"}}, "env", nil)
	if res.Status != corral.StatusSucceeded {
		t.Fatalf("env: %s %s", res.Status, res.Error)
	}
	me, _ := user.Current()
	for _, want := range []string{"PASS_ME=passed-by-name", "AGENT_PASS=passed-for-the-agent", "AGENT_KEY=from-the-agent",
		"HOME=" + me.HomeDir, "USER=" + me.Username, "LANG=", "PATH=", "TZ=Europe/Paris"} {
		if !strings.Contains(out, want) {
			t.Errorf("the environment lacks %s:\n%s", want, out)
		}
	}
	for _, leak := range []string{token, "hunter2-of-the-service", "SERVICE_ONLY_SECRET", "NOT_SET_ANYWHERE"} {
		if strings.Contains(out, leak) {
			t.Errorf("the environment leaks %s:\n%s", leak, out)
		}
	}

	// A variable holding the token is never passed on, whatever its name.
	t.Setenv("INNOCENT_NAME", "prefix-"+token)
	res, _ = run(t, pol, corral.Agent{PassEnv: []string{"INNOCENT_NAME"}}, "echo should-not-run", nil)
	if res.Status != corral.StatusFailed || res.ErrorType != corral.ErrorStart || !strings.Contains(res.Error, "INNOCENT_NAME holds one of the service's secrets") {
		t.Fatalf("passing a variable that holds the token: %s %s %q", res.Status, res.ErrorType, res.Error)
	}
}

// TestInputNeverReachesTheShellsArguments: other users read argv through
// ps; the task's input must not be there, and its commands read nothing
// from standard input.
func TestInputNeverReachesTheShellsArguments(t *testing.T) {
	const marker = "input-marker-7f3a9"
	started := make(chan int, 1)
	done := make(chan struct{})
	var cmdlines []string
	// The script waits until its command line was seen: a shell that ran
	// to its end first would leave nothing to look at.
	seen := filepath.Join(t.TempDir(), "seen")
	go func() {
		defer os.WriteFile(seen, nil, 0o644)
		defer close(done)
		pid := <-started
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil {
				return
			}
			cmdlines = append(cmdlines, strings.ReplaceAll(string(b), "\x00", " "))
			if strings.Contains(string(b), "eval") {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	script := "# " + marker + "\nfor i in $(seq 2000); do [ -e " + seen + " ] && break; sleep 0.01; done\nread line; echo \"stdin gave [$line] rc=$?\"\nprintf '%s\\n' 'multi' 'line'\nexit 3"
	res, out := run(t, &executor.Policy{}, corral.Agent{}, script, func(h proc.Handle) { started <- h.Pid })
	<-done
	if res.Status != corral.StatusFailed || res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("the script did not run as written: %s exit %v %s\n%s", res.Status, res.ExitCode, res.Error, out)
	}
	if !strings.Contains(out, "stdin gave [] rc=1") || !strings.Contains(out, "multi\nline") {
		t.Fatalf("output:\n%s", out)
	}
	if len(cmdlines) == 0 {
		t.Fatal("never saw the shell's command line")
	}
	for _, c := range cmdlines {
		if strings.Contains(c, marker) {
			t.Fatalf("the input is in the shell's arguments: %q", c)
		}
	}
	for _, sh := range []string{"sh", "bash"} {
		res, out = run(t, &executor.Policy{}, corral.Agent{Shell: sh}, "cat; echo \"after cat $?\"\nx='a  b'\necho \"$x\" 'trailing'\n\n", nil)
		if res.Status != corral.StatusSucceeded || !strings.Contains(out, "after cat 0\na  b trailing") {
			t.Fatalf("%s: %s %s\n%s", sh, res.Status, res.Error, out)
		}
	}
	res, _ = run(t, &executor.Policy{}, corral.Agent{}, "echo a\x00b", nil)
	if res.ErrorType != corral.ErrorStart || !strings.Contains(res.Error, "NUL") {
		t.Fatalf("input with a NUL byte: %s %q", res.ErrorType, res.Error)
	}
}

// TestRunAsAnotherUserCannotReadTheDataDirectory needs root: the service
// started as root runs its tasks as nobody, who cannot read its data.
func TestRunAsAnotherUserCannotReadTheDataDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: running tasks as another user needs root; run the tests as root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("SKIP: needs the user nobody")
	}
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "token"), []byte("the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(data, 0o700)
	pol := &executor.Policy{RunAs: "nobody", DataDir: data}
	res, out := run(t, pol, corral.Agent{}, fmt.Sprintf("id -u; echo home=$HOME user=$USER; pwd; ls %s; cat %s/token; echo end", data, data), nil)
	if res.Status != corral.StatusSucceeded {
		t.Fatalf("%s %s\n%s", res.Status, res.Error, out)
	}
	if res.User != "nobody" {
		t.Errorf("the result says it ran as %q", res.User)
	}
	// Stdout and stderr are two pipes: their lines interleave as they
	// arrive, so the uid is a line of out, not necessarily the first.
	if !slices.Contains(strings.Split(out, "\n"), nobody.Uid) || !strings.Contains(out, "user=nobody") {
		t.Fatalf("did not run as nobody (uid %s):\n%s", nobody.Uid, out)
	}
	if strings.Contains(out, "the-token") || !strings.Contains(out, "Permission denied") {
		t.Fatalf("nobody could read the data directory:\n%s", out)
	}
	// Under --run-as, no agent gets root or the service's own user back.
	for _, who := range []string{"root", "0"} {
		res, _ = run(t, pol, corral.Agent{RunAs: who}, "id -u", nil)
		if res.ErrorType != corral.ErrorStart || !strings.Contains(res.Error, "runs no task as root or as itself") {
			t.Fatalf("run_as %s under --run-as: %s %q", who, res.ErrorType, res.Error)
		}
	}
	res, _ = run(t, pol, corral.Agent{RunAs: "no-such-user-here"}, "id -u", nil)
	if res.ErrorType != corral.ErrorStart || !strings.Contains(res.Error, `no user "no-such-user-here"`) {
		t.Fatalf("unknown user: %s %q", res.ErrorType, res.Error)
	}
}

// TestHeadlessPromptNeverBecomesAnOption: an agent stored before templates
// were checked does not start a prompt that its program would read as an
// option.
func TestHeadlessPromptNeverBecomesAnOption(t *testing.T) {
	res, _ := run(t, &executor.Policy{}, corral.Agent{Kind: corral.KindHeadless, Command: []string{"echo", "{{prompt}}"}}, "--dangerously-skip-permissions", nil)
	if res.ErrorType != corral.ErrorStart || !strings.Contains(res.Error, `"--" before {{prompt}}`) {
		t.Fatalf("legacy template, option-like prompt: %s %q", res.ErrorType, res.Error)
	}
}

// TestSandboxedAgentFailsClearlyOrIsConfined: until the sandbox exists on
// this machine a sandboxed agent's run fails to start, saying why; once it
// does, the run cannot read the service's data directory.
func TestSandboxedAgentFailsClearlyOrIsConfined(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "token"), []byte("the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	a := corral.Agent{Workdir: work, Sandbox: corral.Sandbox{Mode: corral.SandboxWorkspace}}
	res, out := run(t, &executor.Policy{DataDir: data}, a, fmt.Sprintf("cat %s/token; echo ok > ok; echo done", data), nil)
	_, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}, Dir: work, Sandbox: a.Sandbox})
	if errors.Is(err, proc.ErrSandboxUnavailable) {
		if res.Status != corral.StatusFailed || res.ErrorType != corral.ErrorStart || !strings.Contains(res.Error, "sandbox (workspace) cannot be built on this worker, so nothing ran") {
			t.Fatalf("a sandboxed run without a sandbox: %s %s %q", res.Status, res.ErrorType, res.Error)
		}
		msg := "!!! SKIP: the sandbox is unavailable here (" + err.Error() + "): a sandboxed agent's runs are refused, as checked; the confinement itself is NOT tested !!!"
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	if res.Status != corral.StatusSucceeded || res.Sandbox == nil {
		t.Fatalf("sandboxed run: %s %q, report %+v\n%s", res.Status, res.Error, res.Sandbox, out)
	}
	if strings.Contains(out, "the-token") {
		t.Fatalf("a sandboxed run read the data directory:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(work, "ok")); err != nil {
		t.Fatalf("the workspace was not writable: %v", err)
	}
}

// TestAShellRunHoldsThreeDescriptors: while a shell task runs on the
// cgroup tier, the executor holds its two output pipes and its process's
// pidfd, nothing more (the service opens the run's log only to write a
// batch of it); on a tier with an init, the init's socket besides: within
// the four a run asked for at 10,000 runs. The task's script is the
// command's to hold once it started.
func TestAShellRunHoldsThreeDescriptors(t *testing.T) {
	const runs = 16
	each := 3
	if _, err := cgroup.Detect(); err != nil {
		each = 4
	}
	tag := testutil.Tag(t)
	before := testutil.UnkeptFDs()
	started := make(chan struct{}, runs)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := &executor.Job{
				Agent:     &corral.Agent{Name: "probe", Kind: corral.KindShell},
				Execution: &corral.Execution{ID: fmt.Sprint("exec-fds-", i), Input: "sleep 60"},
				Env:       []string{testutil.TagEnvVar(tag)},
				Timeout:   time.Minute,
				Stop:      stop,
				MaxOutput: 1 << 20,
				OnStart:   func(proc.Handle) { started <- struct{}{} },
			}
			executor.Shell{Policy: &executor.Policy{}}.Run(context.Background(), j)
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
		testutil.AssertNoTagged(t, tag, 10*time.Second)
	}()
	for range runs {
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatal("the runs did not all start within 30 s")
		}
	}
	held := testutil.UnkeptFDs() - before
	t.Logf("%d runs hold %d descriptors", runs, held)
	if held > each*runs {
		t.Fatalf("%d runs hold %d descriptors, %.2f each: want at most %d each", runs, held, float64(held)/runs, each)
	}
}
