package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
)

// landlockRulesetAttr is struct landlock_ruleset_attr up to the scoped
// field (ABI 6). Older kernels accept it as long as the fields they do not
// know are zero.
type landlockRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// Rights on files, as opposed to directories: a rule on a file may grant
// only these.
const landlockFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV |
	unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX

const landlockReadRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR

// landlockFSRights returns every file-system right the given ABI knows:
// the sandbox handles them all, so that anything not granted is denied.
func landlockFSRights(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: EXECUTE through MAKE_SYM
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= landlockUnixABI {
		r |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return r
}

// devWritable are the device files a command may write (and use ioctls
// on): the harmless ones Prepare puts in the sandbox's /dev.
var devWritable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// landlockRule grants rights beneath each of paths; an optional path may
// be missing.
type landlockRule struct {
	paths    []string
	rights   uint64
	optional bool
}

// landlockPlan returns what the sandbox asks of Landlock for p at the
// given ABI: read and execute everywhere; every right in the writable
// roots, /tmp, /var/tmp, /dev/pts and /dev/shm; writes to the harmless
// devices; from ABI 9 connections to the allowed pathname sockets; from
// ABI 6 under network none, no signals and no abstract Unix sockets
// outside the command's own domain. Each rule's rights are within the
// handled ones. Both inits build their ruleset from it: the Go init here,
// the native one from NativePlan.
func landlockPlan(p *Policy, abi int) (landlockRulesetAttr, []landlockRule) {
	handled := landlockFSRights(abi)
	attr := landlockRulesetAttr{handledFS: handled}
	if abi >= 6 && p.Network == corral.NetworkNone {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	rules := []landlockRule{
		{[]string{"/"}, landlockReadRights, false},
		{landlockWritable(p), handled, false},
		{[]string{"/var/tmp", "/dev/pts", "/dev/shm"}, handled, true},
		{devWritable, landlockFileRights, true},
	}
	if abi >= landlockUnixABI {
		rules = append(rules, landlockRule{p.AllowUnixSockets, unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX, true})
	}
	for i := range rules {
		rules[i].rights &= handled
	}
	return attr, rules
}

// landlockRuleset builds the ruleset of landlockPlan for p and returns its
// descriptor, not yet enforced.
func landlockRuleset(p *Policy, abi int) (int, error) {
	attr, rules := landlockPlan(p, abi)
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock ruleset: %w", errno)
	}
	rs := int(fd)
	for _, r := range rules {
		for _, path := range r.paths {
			if err := landlockAllow(rs, path, r.rights); err != nil {
				if r.optional && errors.Is(err, os.ErrNotExist) {
					continue
				}
				unix.Close(rs)
				return -1, err
			}
		}
	}
	return rs, nil
}

// landlockAllow grants rights beneath path (on path alone if it is not a
// directory, where only file rights apply).
func landlockAllow(rs int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "landlock rule", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "landlock rule", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= landlockFileRights
	}
	// struct landlock_path_beneath_attr is packed: a u64 then an s32.
	var attr [12]byte
	binary.NativeEndian.PutUint64(attr[0:], rights)
	binary.NativeEndian.PutUint32(attr[8:], uint32(int32(fd)))
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr[0])), 0, 0, 0)
	if errno != 0 {
		return &os.PathError{Op: "landlock rule", Path: path, Err: errno}
	}
	return nil
}

// landlockEnforce restricts the calling thread with ruleset rs. The thread
// must have no_new_privs set.
func landlockEnforce(rs int) error {
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs), 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict: %w", errno)
	}
	return nil
}
