package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
)

// A sandbox's private /tmp is a directory of the host's temporary
// directory, removed when the sandbox closes. A supervisor killed with
// SIGKILL closes nothing: its sandboxes' trees die with it (guarantee 7),
// and their directories would stay. So each is named for the process that
// made it — corral-sandbox-NS.PID.START-RANDOM: its pid namespace, pid and
// start time — and a later corral that makes a sandbox removes those whose
// maker has ended, in its own pid namespace (a pid of another namespace
// names nobody here), of its own user (root: of any).
const boxTmpPrefix = "corral-sandbox-"

// boxTmpSweepEvery is how often, at most, making a sandbox looks for the
// directories of dead supervisors.
const boxTmpSweepEvery = time.Minute

var boxTmpSweep struct {
	mu   sync.Mutex
	last time.Time
}

// makeBoxTmp makes a sandbox's private /tmp, named for this process.
func makeBoxTmp() (string, error) {
	return os.MkdirTemp("", boxTmpPrefix+boxTmpMaker(os.Getpid())+"-")
}

// sweepBoxTmpsDue removes what dead supervisors left (sweepBoxTmps), at
// most once a minute. A sandbox's start calls it once its command runs (or
// an enclosure's, once its holder does): it reads the whole temporary
// directory, which no command need wait for.
func sweepBoxTmpsDue() {
	if mutant.BoxTmpSweepSkipped {
		return
	}
	boxTmpSweep.mu.Lock()
	defer boxTmpSweep.mu.Unlock()
	if time.Since(boxTmpSweep.last) >= boxTmpSweepEvery {
		boxTmpSweep.last = time.Now()
		sweepBoxTmps()
	}
}

// boxTmpMaker names process pid, of this pid namespace: NS.PID.START.
func boxTmpMaker(pid int) string {
	st, _ := procfs.ReadStat(pid)
	return fmt.Sprintf("%d.%d.%d", procfs.PIDNamespace(), pid, st.Start)
}

// sweepBoxTmps removes the private /tmp directories of sandboxes whose
// supervisor has ended without closing them (see boxTmpPrefix), with what
// their runs left in them, and returns how many it removed.
func sweepBoxTmps() int {
	dir := os.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil || mutant.BoxTmpKept {
		return 0
	}
	ns, euid, n := procfs.PIDNamespace(), os.Geteuid(), 0
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), boxTmpPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		maker, _, _ := strings.Cut(name, "-")
		f := strings.Split(maker, ".")
		if len(f) != 3 {
			continue // not named for its maker
		}
		mns, err1 := strconv.ParseUint(f[0], 10, 64)
		pid, err2 := strconv.Atoi(f[1])
		start, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || mns != ns || pid == os.Getpid() || !procfs.Ended(pid, start) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) != nil || (euid != 0 && int(st.Uid) != euid) {
			continue
		}
		if os.RemoveAll(path) == nil {
			n++
		}
	}
	return n
}
