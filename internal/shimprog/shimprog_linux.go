package shimprog

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/shim"
)

// Name is the companion's file name, beside corral's executable.
const Name = "corral-shim"

// Self is the program itself, the fallback.
const Self = "/proc/self/exe"

// module is the module whose commands may have the companion.
const module = "github.com/corralrun/corral"

// Path returns the program to start a shim from: the companion, or Self.
// It looks once per process (reading the companion's build information,
// a few system calls) and keeps the answer.
//
// The companion is named by a descriptor this process keeps open
// (/proc/self/fd/N, N ≥ 10, close-on-exec: a child forked to execute it
// still has it), as the program itself is by /proc/self/exe: an init
// started as another user (--run-as) needs no right to the directories
// on the way to it.
func Path() string { return path() }

var path = sync.OnceValue(func() string {
	if p := direct(); p != Self {
		return hold(p)
	}
	return Self
})

// Direct returns the program to start a shim from that runs as this
// process's own user: the companion by its path, or Self. Starting it by
// the descriptor of Path under load, in new namespaces, failed now and
// then with EACCES (about one start in a thousand in a burst of guarded
// runs), by the path never; Path is for an init of another user, who may
// have no right to the directories on the way.
func Direct() string { return direct() }

var direct = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return Self
	}
	return choose(filepath.Join(filepath.Dir(exe), Name))
})

// hold opens companion for good and returns the path of its descriptor,
// or Self if it cannot.
func hold(companion string) string {
	fd, err := unix.Open(companion, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return Self
	}
	// Above the descriptors a shim is given (0 to 3), which a fork puts in
	// place before it executes the path.
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 10)
	unix.Close(fd)
	if err != nil {
		return Self
	}
	shim.Keep(high)
	return "/proc/self/fd/" + strconv.Itoa(high)
}

// choose returns companion if it was built from the same source as this
// program, else Self.
func choose(companion string) string {
	self, ok := debug.ReadBuildInfo()
	if !ok || self.Main.Path != module || self.Path == module+"/cmd/corral-shim" {
		return Self
	}
	other, err := readBuildInfo(companion)
	if err != nil || !sameBuild(self, other) {
		return Self
	}
	return companion
}
