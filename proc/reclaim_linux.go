package proc

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/reaper"
)

func reclaim(ctx context.Context, h Handle) (int, error) {
	if h.Cgroup != "" {
		return reclaimCgroup(ctx, h.Cgroup)
	}
	if h.Pid <= 0 || h.StartTicks == 0 {
		return 0, errors.New("proc: reclaim: handle has neither cgroup nor pid and start time")
	}
	// Members of the run: its session and group, led by the main process.
	// While the main process lives with the recorded start time, its ids
	// are the run's. Once it is gone, the ids could only have been reused by
	// a new process with the same pid; if that is not the case, everything
	// still in the session started after the main process is the run's.
	if st, err := procfs.ReadStat(h.Pid); err == nil && st.Start != h.StartTicks {
		return 0, nil // pid recycled: the old session has no leader; leave it
	}
	killed := map[procKey]bool{}
	for round := 0; round < 10; round++ {
		all, err := procfs.Scan()
		if err != nil {
			return len(killed), err
		}
		n := 0
		for _, st := range runMembers(all, h) {
			k := procKey{pid: st.Pid, start: st.Start}
			if !st.Zombie() && procfs.Signal(st.Pid, st.Start, unix.SIGKILL) == nil {
				killed[k] = true
				n++
			}
		}
		if n == 0 {
			break
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return len(killed), err
		}
	}
	// Reap the victims that came to us as orphans, once they are dead.
	victim := func(z *reaper.Zombie) bool { return killed[procKey{pid: z.Pid, start: z.Start}] }
	defer reaper.Reap(victim)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		reaper.Reap(victim)
		if !anyAlive(killed) {
			break
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return len(killed), err
		}
	}
	return len(killed), nil
}

// anyAlive reports whether a process of set still runs, or is a zombie
// child of ours not reaped yet (a multithreaded process is a zombie before
// it can be reaped).
func anyAlive(set map[procKey]bool) bool {
	self := os.Getpid()
	for k := range set {
		if st, err := procfs.ReadStat(k.pid); err == nil && st.Start == k.start && (!st.Zombie() || st.PPid == self) {
			return true
		}
	}
	return false
}

func reclaimCgroup(ctx context.Context, path string) (int, error) {
	leaf, err := cgroup.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	pids, _ := leaf.Procs()
	if err := leaf.Kill(); err != nil && !errors.Is(err, os.ErrNotExist) {
		leaf.Close()
		return 0, err
	}
	deadline := time.Now().Add(time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	leaf.WaitEmpty(deadline)
	reaper.Reap(func(z *reaper.Zombie) bool { return z.Cgroup() == leaf.Rel() })
	return len(pids), leaf.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runMembers returns the processes of the run h led: those in its session
// or group, and, spreading from parent to child, their descendants, all
// started no earlier than the main process. A descendant that left the
// session after its parent died has lost every tie and is not found: that
// is what the cgroup tier is for.
func runMembers(all []procfs.Stat, h Handle) []procfs.Stat {
	in := map[int]bool{}
	self := os.Getpid()
	for changed := true; changed; {
		changed = false
		for _, st := range all {
			if in[st.Pid] || st.Pid == self || st.Start < h.StartTicks {
				continue
			}
			if st.Pid == h.Pid || st.Sid == h.Pid || st.Pgid == h.Pid || in[st.PPid] {
				in[st.Pid] = true
				changed = true
			}
		}
	}
	var out []procfs.Stat
	for _, st := range all {
		if in[st.Pid] {
			out = append(out, st)
		}
	}
	return out
}

func findLabelled(label string) (Handle, bool) {
	root, err := cgroup.Detect()
	if err != nil {
		return Handle{}, false
	}
	path, ok := root.FindLabelled(label)
	if !ok {
		return Handle{}, false
	}
	return Handle{Cgroup: path, Containment: corral.ContainmentCgroup}, true
}
