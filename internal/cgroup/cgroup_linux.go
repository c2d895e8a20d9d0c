// Package cgroup manages the cgroup v2 leaves corral runs commands in: one
// leaf per run, killed as a whole with cgroup.kill, confirmed empty through
// cgroup.events and removed.
//
// The leaves of one corral process sit in a directory of its own, named
// for its pid and start time, inside the corral-owned directory:
//
//	…/corral/PID.START/SEQ[-LABEL]
//
// so that one write to that directory's cgroup.kill kills every process of
// every run of that process at once: what its guardian does when it dies
// (guarantee 7). A leaf whose processes are meant to outlive their
// supervisor (detached) is moved out, to …/corral/PID.START.SEQ[-LABEL],
// the form every leaf had before owner directories.
//
// Nothing here touches a cgroup outside the corral-owned directory.
// Commands are born inside their leaf (clone3 with CLONE_INTO_CGROUP,
// through the leaf's directory descriptor); the only processes ever moved
// are a detached leaf's, from one corral cgroup to another.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/internal/procfs"
)

// Root is the corral-owned directory, and this process's directory in it
// that its leaves are created in.
type Root struct {
	// Mount is where the cgroup v2 hierarchy is mounted.
	Mount string
	// Dir is the corral-owned directory, inside Mount.
	Dir string
	// Owner is this process's directory inside Dir, named for its pid and
	// start time: every leaf NewLeaf makes is in it. It is made by Detect
	// and left for a later process's sweep once this one is gone.
	Owner string
	// CanKill reports that the kernel offers cgroup.kill (Linux 5.14+).
	CanKill bool
	// Controllers lists the controllers enabled for leaves (such as "pids",
	// "memory"); limits need them.
	Controllers []string

	swept sync.Once
}

var (
	detectOnce sync.Once
	detected   *Root
	detectErr  error
	leafSeq    atomic.Uint64
)

// Detect finds a cgroup v2 hierarchy this process may create cgroups in and
// prepares corral's directory there. It is computed once per process. The
// error, when there is one, says why the cgroup tier cannot be used.
func Detect() (*Root, error) {
	detectOnce.Do(func() { detected, detectErr = detect() })
	return detected, detectErr
}

func detect() (*Root, error) {
	mount, err := findMount()
	if err != nil {
		return nil, err
	}
	// Prefer the hierarchy's top (we are root, or it is delegated to us);
	// otherwise a subtree delegated to our own cgroup, which is read only
	// then (a /proc read a corral command need not pay as root).
	var errs []error
	for i := range 2 {
		dir := filepath.Join(mount, "corral")
		if i == 1 {
			own, err := procfs.Cgroup2(os.Getpid())
			if err != nil {
				errs = append(errs, fmt.Errorf("reading own cgroup: %w", err))
				break
			}
			if own == "/" {
				break
			}
			dir = filepath.Join(mount, own, "corral")
		}
		// This process's own directory: making it proves we may make
		// cgroups here.
		owner := filepath.Join(dir, strings.TrimSuffix(OwnerPrefix(), "."))
		if err := makeOwner(dir, owner); err != nil {
			errs = append(errs, err)
			continue
		}
		r := &Root{Mount: mount, Dir: dir, Owner: owner}
		_, err := os.Stat(filepath.Join(dir, "cgroup.kill"))
		r.CanKill = err == nil
		r.Controllers = enableControllers(mount, owner)
		return r, nil
	}
	return nil, fmt.Errorf("no writable cgroup v2 directory (run as root or in a delegated cgroup): %w", errors.Join(errs...))
}

// makeOwner makes owner in dir, and dir first where it is not there yet:
// one call where an earlier corral process made dir, the usual case.
func makeOwner(dir, owner string) error {
	err := os.Mkdir(owner, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		err = os.Mkdir(owner, 0o755)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// findMount returns the mount point of the cgroup v2 hierarchy: where
// systemd and container runtimes mount it (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified beside a v1 hierarchy), asked with one statfs
// each, else the first cgroup2 mount that /proc/self/mountinfo lists
// (reading and splitting it was a fiftieth of a corral command's page
// faults).
func findMount() (string, error) {
	for _, p := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return p, nil
		}
	}
	return mountFromMountinfo()
}

// mountFromMountinfo returns the first cgroup2 mount /proc/self/mountinfo
// lists.
func mountFromMountinfo() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ... mountpoint ... - fstype source options
		fields := strings.Fields(sc.Text())
		for i, fl := range fields {
			if fl == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return procfs.UnescapeMountinfo(fields[4]), nil
			}
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}

// enableControllers turns on the pids and memory controllers for corral's
// leaves where the hierarchy offers them, and returns those enabled. Every
// level between the mount and dir (the owner directory the leaves are in)
// must enable them for its children.
func enableControllers(mount, dir string) []string {
	// A controller the hierarchy does not offer cannot be enabled below
	// it: not tried (two failed writes a command on a hybrid hierarchy).
	offered := readCgroupFile(filepath.Join(mount, "cgroup.controllers"))
	var enabled []string
	for _, c := range []string{"pids", "memory"} {
		if !hasField(offered, c) {
			continue
		}
		ok := true
		for p := mount; ; p = filepath.Join(p, nextElem(dir, p)) {
			control := filepath.Join(p, "cgroup.subtree_control")
			if !hasField(readCgroupFile(control), c) && writeCgroupFile(control, "+"+c) != nil {
				ok = false
				break
			}
			if p == dir {
				break
			}
		}
		if ok {
			enabled = append(enabled, c)
		}
	}
	return enabled
}

// nextElem returns the path element of dir that follows p.
func nextElem(dir, p string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(dir, p), "/")
	elem, _, _ := strings.Cut(rest, "/")
	return elem
}

func hasField(text, c string) bool {
	for _, f := range strings.Fields(text) {
		if f == c {
			return true
		}
	}
	return false
}

// readCgroupFile returns a small cgroup file's text, empty if it cannot
// be read: a plain open, read and close (an os.File would join the
// runtime's poller and leave it, four system calls more).
func readCgroupFile(path string) string {
	b, err := procfs.ReadFile(path, make([]byte, 0, 512))
	if err != nil {
		return ""
	}
	return string(b)
}

// writeCgroupFile writes text to a cgroup file in one write.
func writeCgroupFile(path, text string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for {
		_, err = unix.Write(fd, []byte(text))
		if err != unix.EINTR {
			return err
		}
	}
}

// Leaf is one run's cgroup.
type Leaf struct {
	// Path is the leaf's directory.
	Path    string
	rel     string // path inside the hierarchy, as /proc/PID/cgroup shows it
	fd      int
	canKill bool
}

// NewLeaf creates a leaf for one run in this process's directory. Its name
// is a sequence number, unique in the process, then label, if not empty,
// for people reading the tree.
func (r *Root) NewLeaf(label string) (*Leaf, error) {
	name := strconv.FormatUint(leafSeq.Add(1), 10)
	if label = sanitize(label); label != "" {
		name += "-" + label
	}
	path := filepath.Join(r.Owner, name)
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("creating cgroup leaf: %w", err)
	}
	l, err := openLeaf(r.Mount, path, r.CanKill)
	if err != nil {
		_ = os.Remove(path)
		return nil, err
	}
	return l, nil
}

// Open opens an existing leaf by path, for reclaiming the tree of a run
// whose supervisor died. The path must lie inside a corral directory.
func Open(path string) (*Leaf, error) {
	if !strings.Contains(filepath.Clean(path), "/corral/") {
		return nil, fmt.Errorf("refusing to open cgroup %s: not a corral leaf", path)
	}
	mount, err := findMount()
	if err != nil {
		return nil, err
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(path), "cgroup.kill"))
	return openLeaf(mount, path, err == nil)
}

func openLeaf(mount, path string, canKill bool) (*Leaf, error) {
	rel, err := filepath.Rel(mount, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("cgroup leaf %s is not under %s", path, mount)
	}
	fd, err := unix.Open(path, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening cgroup leaf: %w", err)
	}
	return &Leaf{Path: path, rel: "/" + rel, fd: fd, canKill: canKill}, nil
}

// FD returns the leaf's directory descriptor, for SysProcAttr.CgroupFD.
func (l *Leaf) FD() int { return l.fd }

// ReleaseFD closes the directory descriptor, which only starting a
// process into the leaf needs: a run keeps no descriptor for its leaf
// once its process is in. The leaf stays; FD is -1 from now on.
func (l *Leaf) ReleaseFD() {
	if l.fd >= 0 {
		_ = unix.Close(l.fd)
		l.fd = -1
	}
}

// Procs returns the pids of the live processes in the leaf. Zombies are not
// listed: the kernel removes a process from its cgroup when it exits.
func (l *Leaf) Procs() ([]int, error) {
	var buf [512]byte
	b, err := procfs.ReadFile(l.Path+"/cgroup.procs", buf[:0])
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Populated reports whether any live process is in the leaf. A leaf whose
// processes are all zombies is not populated.
func (l *Leaf) Populated() (bool, error) {
	var buf [256]byte
	b, err := procfs.ReadFile(l.Path+"/cgroup.events", buf[:0])
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, errors.New("cgroup.events has no populated line")
}

// Kill sends SIGKILL to every process in the leaf at once. Without
// cgroup.kill it freezes the leaf, kills each member and thaws it, so that
// no member can fork between the listing and the kill.
func (l *Leaf) Kill() error {
	if l.canKill {
		return os.WriteFile(filepath.Join(l.Path, "cgroup.kill"), []byte("1"), 0)
	}
	if err := l.Freeze(true); err != nil {
		return err
	}
	defer l.Freeze(false)
	pids, err := l.Procs()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		_ = l.SignalMember(pid, unix.SIGKILL)
	}
	return nil
}

// MoveOut moves the leaf's processes out of its owner's directory, into a
// leaf of their own directly in corral's directory (named
// PID.START.SEQ[-LABEL], its owner's name and its own), where the death of
// the process that made them does not reach them: a run whose leftovers
// are detached. Its pids.max and memory.max go with them. The leaf is
// frozen while its processes are listed and moved, so that none forks
// behind the move, then removed; the Leaf stands for the new one from
// then on. A leaf already outside an owner's directory is left as it is.
// It returns an error when processes remain (they die with their
// supervisor).
func (l *Leaf) MoveOut() error {
	ownerDir, inner := filepath.Split(l.Path)
	ownerDir = filepath.Clean(ownerDir)
	corralDir, owner := filepath.Split(ownerDir)
	if _, _, ok := parseOwnerName(owner); !ok {
		return nil
	}
	if _, _, ok := parseInnerName(inner); !ok {
		return fmt.Errorf("cgroup leaf %s: not a leaf of corral's", l.Path)
	}
	dest := filepath.Join(corralDir, owner+"."+inner)
	if err := os.Mkdir(dest, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("detaching cgroup leaf: %w", err)
	}
	for _, f := range []string{"pids.max", "memory.max", "memory.swap.max"} {
		if v := readCgroupFile(filepath.Join(l.Path, f)); v != "" && v != "max\n" {
			_ = writeCgroupFile(filepath.Join(dest, f), strings.TrimSpace(v))
		}
	}
	frozen := l.Freeze(true) == nil && l.waitFrozen(time.Now().Add(2*time.Second))
	left := l.moveProcs(filepath.Join(dest, "cgroup.procs"), time.Now().Add(2*time.Second))
	if frozen {
		_ = l.Freeze(false)
	}
	if left > 0 {
		return fmt.Errorf("detaching cgroup leaf %s: %d processes could not be moved out", l.Path, left)
	}
	_ = l.Remove()
	mount := strings.TrimSuffix(l.Path, l.rel)
	l.Path, l.rel = dest, strings.TrimPrefix(dest, mount)
	return nil
}

// moveProcs writes each process of the leaf into procs, another cgroup's
// cgroup.procs, until none is left or the deadline passes, and returns how
// many are left.
func (l *Leaf) moveProcs(procs string, deadline time.Time) int {
	for {
		pids, err := l.Procs()
		if err != nil || len(pids) == 0 {
			return 0
		}
		for _, pid := range pids {
			_ = writeCgroupFile(procs, strconv.Itoa(pid)) // ESRCH: it exited
		}
		if !time.Now().Before(deadline) {
			pids, _ = l.Procs()
			return len(pids)
		}
	}
}

// waitFrozen polls cgroup.events until the leaf is frozen or the deadline
// passes.
func (l *Leaf) waitFrozen(deadline time.Time) bool {
	for d := 50 * time.Microsecond; ; d = min(d*2, 5*time.Millisecond) {
		if strings.Contains(readCgroupFile(l.Path+"/cgroup.events"), "frozen 1") {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(d)
	}
}

// KillOwner kills every process of every leaf in dir, a corral process's
// own directory (Root.Owner), at once: one write to its cgroup.kill, or,
// without one, each leaf frozen and its members killed. It is what a
// guardian does when its supervisor is gone.
func KillOwner(dir string) error {
	o, err := Open(dir)
	if err != nil {
		return err
	}
	defer o.ReleaseFD()
	if o.canKill {
		return o.Kill()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if _, _, ok := parseInnerName(e.Name()); ok && e.IsDir() {
			if l, err := Open(filepath.Join(dir, e.Name())); err == nil {
				errs = append(errs, l.Kill())
				l.ReleaseFD()
			}
		}
	}
	return errors.Join(errs...)
}

// RemoveOwner waits, until the deadline, for dir (Root.Owner) to hold no
// process, then removes its leaves and itself; what still holds processes
// is left for a later sweep.
func RemoveOwner(dir string, deadline time.Time) {
	if o, err := Open(dir); err == nil {
		o.ReleaseFD()
		o.WaitEmpty(deadline)
	}
	removeOwner(dir)
}

// Freeze freezes or thaws the leaf.
func (l *Leaf) Freeze(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return os.WriteFile(filepath.Join(l.Path, "cgroup.freeze"), []byte(v), 0)
}

// SignalMember sends sigs, in order, to pid if, and only if, that pid is a process in
// this leaf. It pins the process with a pidfd before checking, so a pid that
// was recycled is never signalled. It returns procfs.ErrGone when the
// process is no longer there.
func (l *Leaf) SignalMember(pid int, sigs ...unix.Signal) error {
	return procfs.SignalIf(pid, func() bool { return l.Contains(pid) }, sigs...)
}

// SetLimits writes pids.max and memory.max where the controllers are
// enabled. A zero limit is left alone.
func (l *Leaf) SetLimits(pids int, memory int64) error {
	var errs []error
	if pids > 0 {
		errs = append(errs, os.WriteFile(filepath.Join(l.Path, "pids.max"), []byte(strconv.Itoa(pids)), 0))
	}
	if memory > 0 {
		errs = append(errs, os.WriteFile(filepath.Join(l.Path, "memory.max"), []byte(strconv.FormatInt(memory, 10)), 0))
		// Without swap the limit means what it says.
		_ = os.WriteFile(filepath.Join(l.Path, "memory.swap.max"), []byte("0"), 0)
	}
	return errors.Join(errs...)
}

// WaitEmpty polls until the leaf holds no live process or the deadline
// passes, and reports whether it is empty.
func (l *Leaf) WaitEmpty(deadline time.Time) bool {
	for d := 200 * time.Microsecond; ; d = min(d*2, 5*time.Millisecond) {
		pop, err := l.Populated()
		if err != nil || !pop {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(d, time.Until(deadline)))
	}
}

// Close releases the directory descriptor and removes the leaf if it is
// empty. It returns an error wrapping syscall.EBUSY when processes remain.
func (l *Leaf) Close() error {
	l.ReleaseFD()
	return l.Remove()
}

// Remove removes the leaf's directory. An empty leaf may stay busy for a
// moment after its last process died, so EBUSY is retried briefly.
func (l *Leaf) Remove() error {
	var err error
	for i := 0; i < 50; i++ {
		err = unix.Rmdir(l.Path) // a directory: os.Remove would try unlink first
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		if pop, perr := l.Populated(); perr == nil && pop {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return err
}

// OwnerPrefix starts the name of every leaf this process makes:
// "PID.START.", the pid and start time of the process (read once: they do
// not change).
var OwnerPrefix = sync.OnceValue(ownerPrefix)

func ownerPrefix() string {
	st, err := procfs.ReadStat(os.Getpid())
	if err != nil {
		return strconv.Itoa(os.Getpid()) + ".0."
	}
	return strconv.Itoa(st.Pid) + "." + strconv.FormatUint(st.Start, 10) + "."
}

// sweepAtMost bounds the directories one sweep looks at. Each is a read
// of /proc, and every corral process sweeps once, at its first cgroup-tier
// run: with 300 supervisors alive on the machine, a `corral run` that
// looked at every one took 12.5 ms instead of 4.8. A sweep looks at this
// many, from a place chosen at random, so that what a dead supervisor
// left goes within a few starts whatever the number alive.
const sweepAtMost = 16

// Sweep removes what supervisors that are gone left behind (see sweep),
// once per process: later calls return at once. Detect does not: the
// sweep is housekeeping no run waits for, made (by proc) once the first
// cgroup-tier run's command has started, while it runs.
func (r *Root) Sweep() {
	if !mutant.SweepSkipped {
		r.swept.Do(r.sweep)
	}
}

// sweep removes what supervisors that are gone left empty: their
// directories and the leaves in them, and the leaves they detached whose
// processes have all ended, among sweepAtMost of the directories. A leaf
// that still holds processes, and what a live supervisor made, are left
// alone.
func (r *Root) sweep() {
	f, err := os.Open(r.Dir)
	if err != nil {
		return
	}
	ents, _ := f.ReadDir(-1) // in the directory's order: nothing to sort
	f.Close()
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	n := min(len(dirs), sweepAtMost)
	if mutant.SweepUnbounded {
		n = len(dirs)
	}
	first := 0
	if len(dirs) > 0 {
		first = rand.IntN(len(dirs))
	}
	for i := range n {
		name := dirs[(first+i)%len(dirs)]
		if l, ok := parseLeafName(name); ok {
			if !alive(l.pid, l.start) {
				_ = unix.Rmdir(filepath.Join(r.Dir, name)) // fails harmlessly if populated
			}
			continue
		}
		if pid, start, ok := parseOwnerName(name); ok && !alive(pid, start) {
			removeOwner(filepath.Join(r.Dir, name))
		}
	}
}

// removeOwner removes a dead supervisor's directory and its empty leaves.
func removeOwner(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, _, ok := parseInnerName(e.Name()); ok && e.IsDir() {
			_ = unix.Rmdir(filepath.Join(dir, e.Name()))
		}
	}
	_ = unix.Rmdir(dir) // fails harmlessly while a leaf is left
}

// alive reports whether the process pid that started at start still runs.
func alive(pid int, start uint64) bool {
	st, err := procfs.ReadStat(pid)
	return err == nil && st.Start == start
}

// leafName is what a detached leaf's name says (see Leaf.MoveOut):
// "PID.START.SEQ", the pid and start time of the process that made it and
// a sequence number, then "-LABEL" when the run had a label.
type leafName struct {
	pid   int
	start uint64
	label string // sanitized
}

func parseLeafName(name string) (leafName, bool) {
	owner, inner, ok := cutOwner(name)
	if !ok {
		return leafName{}, false
	}
	pid, start, ok1 := parseOwnerName(owner)
	_, label, ok2 := parseInnerName(inner)
	if !ok1 || !ok2 {
		return leafName{}, false
	}
	return leafName{pid: pid, start: start, label: label}, true
}

// cutOwner splits "PID.START.REST" after its second dot.
func cutOwner(name string) (owner, rest string, ok bool) {
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return "", "", false
	}
	j := strings.IndexByte(name[i+1:], '.')
	if j < 0 {
		return "", "", false
	}
	return name[:i+1+j], name[i+2+j:], true
}

// parseOwnerName reads an owner directory's name, "PID.START".
func parseOwnerName(name string) (pid int, start uint64, ok bool) {
	p, s, found := strings.Cut(name, ".")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	return pid, start, found && err1 == nil && err2 == nil && pid > 0
}

// parseInnerName reads a leaf's name inside its owner's directory,
// "SEQ[-LABEL]".
func parseInnerName(name string) (seq uint64, label string, ok bool) {
	s, label, _ := strings.Cut(name, "-")
	seq, err := strconv.ParseUint(s, 10, 64)
	return seq, label, err == nil
}

// IsRunLeaf reports whether rel, a cgroup as /proc/PID/cgroup shows it,
// is a run's leaf that corral made, in this process or another: a leaf in
// an owner's directory in a directory named corral, or a detached leaf in
// that directory itself.
func IsRunLeaf(rel string) bool {
	dir, name := filepath.Split(strings.TrimSuffix(rel, " (deleted)"))
	dir = filepath.Clean(dir)
	if _, ok := parseLeafName(name); ok {
		return filepath.Base(dir) == "corral"
	}
	if _, _, ok := parseInnerName(name); !ok {
		return false
	}
	up, owner := filepath.Split(dir)
	_, _, ok := parseOwnerName(owner)
	return ok && filepath.Base(filepath.Clean(up)) == "corral"
}

// FindLabelled returns the path of the leaf made for the run labelled
// label (by any corral process, as NewLeaf names it, detached or not) in
// corral's directory, if there is one. Labels are meant to be unique per
// run; when several leaves carry the label, the first found is returned.
func (r *Root) FindLabelled(label string) (string, bool) {
	want := sanitize(label)
	if want == "" {
		return "", false
	}
	ents, err := os.ReadDir(r.Dir)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if n, ok := parseLeafName(e.Name()); ok {
			if n.label == want {
				return filepath.Join(r.Dir, e.Name()), true
			}
			continue
		}
		if _, _, ok := parseOwnerName(e.Name()); !ok {
			continue
		}
		inner, _ := os.ReadDir(filepath.Join(r.Dir, e.Name()))
		for _, l := range inner {
			if _, lab, ok := parseInnerName(l.Name()); ok && l.IsDir() && lab == want {
				return filepath.Join(r.Dir, e.Name(), l.Name()), true
			}
		}
	}
	return "", false
}

func sanitize(s string) string {
	var b strings.Builder
	for _, c := range s {
		if b.Len() >= 64 {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Contains reports whether pid is (or, for a zombie, was when it exited) a
// process of this leaf.
func (l *Leaf) Contains(pid int) bool {
	cg, err := procfs.Cgroup2(pid)
	return err == nil && cg == l.rel
}

// Rel returns the leaf's path inside the hierarchy, as /proc/PID/cgroup
// shows it.
func (l *Leaf) Rel() string { return l.rel }
