// Package cgroup manages the cgroup v2 leaves corral runs commands in: one
// leaf per run, created under a corral-owned directory, killed as a whole
// with cgroup.kill, confirmed empty through cgroup.events and removed.
//
// Nothing here touches a cgroup outside the corral-owned directory, and no
// process is ever moved: commands are born inside their leaf (clone3 with
// CLONE_INTO_CGROUP, through the leaf's directory descriptor).
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
)

// Root is the corral-owned directory that leaves are created in.
type Root struct {
	// Mount is where the cgroup v2 hierarchy is mounted.
	Mount string
	// Dir is the corral-owned directory, inside Mount.
	Dir string
	// CanKill reports that the kernel offers cgroup.kill (Linux 5.14+).
	CanKill bool
	// Controllers lists the controllers enabled for leaves (such as "pids",
	// "memory"); limits need them.
	Controllers []string
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
	own, err := procfs.Cgroup2(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("reading own cgroup: %w", err)
	}
	// Prefer the hierarchy's top (we are root, or it is delegated to us);
	// otherwise a subtree delegated to our own cgroup.
	candidates := []string{filepath.Join(mount, "corral")}
	if own != "/" {
		candidates = append(candidates, filepath.Join(mount, own, "corral"))
	}
	var errs []error
	for _, dir := range candidates {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			errs = append(errs, err)
			continue
		}
		// Creating a leaf proves we may; the leaf is removed at once.
		probe := filepath.Join(dir, fmt.Sprintf("probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			errs = append(errs, err)
			continue
		}
		_ = os.Remove(probe)
		r := &Root{Mount: mount, Dir: dir}
		_, err := os.Stat(filepath.Join(dir, "cgroup.kill"))
		r.CanKill = err == nil
		r.Controllers = enableControllers(mount, dir)
		r.sweep()
		return r, nil
	}
	return nil, fmt.Errorf("no writable cgroup v2 directory (run as root or in a delegated cgroup): %w", errors.Join(errs...))
}

// findMount returns the mount point of the cgroup v2 hierarchy.
func findMount() (string, error) {
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
// level between the mount and dir must enable them for its children.
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

// NewLeaf creates a leaf for one run. The name is made unique and carries
// this process's pid and start time, so that a later sweep can tell leaves
// of dead supervisors; label, if not empty, is appended for people reading
// the tree.
func (r *Root) NewLeaf(label string) (*Leaf, error) {
	name := OwnerPrefix() + strconv.FormatUint(leafSeq.Add(1), 10)
	if label = sanitize(label); label != "" {
		name += "-" + label
	}
	path := filepath.Join(r.Dir, name)
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

// sweep removes empty leaves left by supervisors that are gone. A leaf whose
// owner still lives, or that still holds processes, is left alone.
func (r *Root) sweep() {
	ents, err := os.ReadDir(r.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n, ok := parseLeafName(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		if st, err := procfs.ReadStat(n.pid); err == nil && st.Start == n.start {
			continue // owner alive
		}
		_ = os.Remove(filepath.Join(r.Dir, e.Name())) // fails harmlessly if populated
	}
}

// leafName is what a leaf's name says (see NewLeaf): "PID.START.SEQ", the
// pid and start time of the process that made it and a sequence number,
// then "-LABEL" when the run had a label.
type leafName struct {
	pid   int
	start uint64
	label string // sanitized
}

func parseLeafName(name string) (leafName, bool) {
	parts := strings.SplitN(name, ".", 3)
	if len(parts) < 3 {
		return leafName{}, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	seq, label, _ := strings.Cut(parts[2], "-")
	_, err3 := strconv.ParseUint(seq, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return leafName{}, false
	}
	return leafName{pid: pid, start: start, label: label}, true
}

// IsRunLeaf reports whether rel, a cgroup as /proc/PID/cgroup shows it,
// is a run's leaf that corral made, in this process or another: a name of
// NewLeaf's form in a directory named corral.
func IsRunLeaf(rel string) bool {
	dir, name := filepath.Split(strings.TrimSuffix(rel, " (deleted)"))
	_, ok := parseLeafName(name)
	return ok && filepath.Base(dir) == "corral"
}

// FindLabelled returns the path of the leaf made for the run labelled
// label (by any corral process, as NewLeaf names it) in corral's
// directory, if there is one. Labels are meant to be unique per run; when
// several leaves carry the label, the first found is returned.
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
		if n, ok := parseLeafName(e.Name()); ok && e.IsDir() && n.label == want {
			return filepath.Join(r.Dir, e.Name()), true
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
