//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/proc"
)

// supervisorEnv makes this program a supervisor for the death part: it
// starts the escapees under the binding its value names, says "up" once
// they run, and waits to be killed.
const supervisorEnv = "CORRAL_BENCH_SUPERVISOR"

// escapees leaves a background job, a setsid escapee, a double fork and a
// daemon that clears its environment (tagged in its argv).
const escapees = `sleep 600 & setsid sleep 600 & (sleep 600 &); setsid -f env -i bash -c 'exec 0<&- 1>&- 2>&-; (exec -a TAG-daemon sleep 600 &)'; echo up; sleep 600`

func init() {
	how := os.Getenv(supervisorEnv)
	if how == "" {
		return
	}
	tag := os.Getenv("CORRAL_BENCH_TAG")
	script := strings.ReplaceAll(escapees, "TAG", tag)
	if how == "os/exec" {
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "CORRAL_BENCH_TAG="+tag)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, _ := cmd.StdoutPipe()
		cmd.Start()
		bufio.NewReader(out).ReadString('\n')
		fmt.Println("up")
		select {}
	}
	spec := &proc.Spec{Args: []string{"bash", "-c", script}, Env: []string{"CORRAL_BENCH_TAG=" + tag}}
	switch how {
	case "sandbox":
		spec.Sandbox = corral.Sandbox{Mode: corral.SandboxReadOnly}
	default:
		spec.Containment = corral.Containment(how)
	}
	p, err := proc.Start(context.Background(), spec)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for {
		if o, _ := p.Output(); strings.Contains(o.Text(), "up") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Println("up")
	select {}
}

// death kills a supervisor with SIGKILL while its run's tree of escapees
// runs, and times until no process of the tree is left, for each binding,
// beside a supervisor that runs the same tree with os/exec (in its own
// process group, as careful code does).
func death() {
	const n = 20
	hows := []string{string(corral.ContainmentSubreaper), string(corral.ContainmentProcessGroup), "sandbox"}
	if _, err := cgroup.Detect(); err == nil {
		hows = append([]string{string(corral.ContainmentCgroup)}, hows...)
	}
	hows = append(hows, "os/exec")
	fmt.Printf("## The supervisor killed with SIGKILL: time until its run's tree is gone, %d runs each\n\n", n)
	fmt.Println("| supervisor | binding | median | max | processes left after 5 s |")
	fmt.Println("|---|---|---|---|---|")
	self, _ := os.Executable()
	for _, how := range hows {
		var times []time.Duration
		left, binding := 0, ""
		for i := 0; i < n; i++ {
			tag := newTag()
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), supervisorEnv+"="+how, "CORRAL_BENCH_TAG="+tag)
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			if line, _ := bufio.NewReader(out).ReadString('\n'); !strings.HasPrefix(line, "up") {
				fmt.Fprintf(os.Stderr, "%s: %q\n", how, line)
				os.Exit(1)
			}
			for len(tagged(tag)) < 5 {
				time.Sleep(time.Millisecond)
			}
			kids, _ := procfs.Children(cmd.Process.Pid)
			t0 := time.Now()
			cmd.Process.Kill()
			cmd.Wait()
			for len(tagged(tag)) > 0 && time.Since(t0) < 5*time.Second {
				time.Sleep(500 * time.Microsecond)
			}
			d := time.Since(t0)
			if l := len(tagged(tag)); l > 0 {
				left += l
				sweep(tag)
			} else {
				times = append(times, d)
			}
			reapGone(kids)
		}
		switch how {
		case "os/exec":
			binding = "none"
		case "sandbox":
			binding = proc.BindingPidNamespace
		case string(corral.ContainmentCgroup):
			binding = proc.BindingGuardian
		default:
			binding = proc.BindingInit
		}
		med, max := "—", "—"
		if len(times) > 0 {
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			med, max = fmtDur(times[len(times)/2]), fmtDur(times[len(times)-1])
		}
		fmt.Printf("| %s | %s | %s | %s | %d |\n", how, binding, med, max, left)
	}
	fmt.Println()
}

// tagged returns the live processes carrying tag.
func tagged(tag string) []procfs.Stat {
	all, _ := procfs.Scan()
	var out []procfs.Stat
	for _, st := range all {
		if !st.Zombie() && st.Pid != os.Getpid() && procfs.HasToken(st.Pid, tag) {
			out = append(out, st)
		}
	}
	return out
}

// reapGone reaps the killed supervisor's children once they have died:
// they were handed to this process, a subreaper.
func reapGone(kids []int) {
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range kids {
		for time.Now().Before(deadline) {
			var ws syscall.WaitStatus
			syscall.Wait4(k, &ws, syscall.WNOHANG, nil)
			if _, err := procfs.ReadStat(k); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
