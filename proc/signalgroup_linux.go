package proc

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func (c *linuxChild) signalOutside(sig syscall.Signal, pgid int) []procKey {
	return signalOutside(c.tree, sig, pgid)
}

func (c *initChild) signalOutside(sig syscall.Signal, pgid int) []procKey {
	return signalOutside(c.tree, sig, pgid)
}

// signalOutside signals the members of t whose process group is not pgid,
// each checked to be still the member it was (start time, cgroup).
func signalOutside(t tree, sig syscall.Signal, pgid int) []procKey {
	var out []procKey
	for _, k := range t.members() {
		if g, err := unix.Getpgid(k.pid); err != nil || g == pgid {
			continue
		}
		if t.signalMember(k, sig) == nil {
			out = append(out, k)
		}
	}
	if followWithCont(sig) {
		for _, k := range out {
			t.signalMember(k, unix.SIGCONT)
		}
	}
	return out
}
