//go:build unix

package secret

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFdNumberNamesOnlyDescriptorPaths: the paths whose descriptor is
// closed once read are /dev/fd/N and /proc/self/fd/N, N digits alone (the
// pattern ^/(?:dev|proc/self)/fd/([0-9]+)$ it was once matched with).
func TestFdNumberNamesOnlyDescriptorPaths(t *testing.T) {
	for _, c := range []struct {
		path string
		fd   int
		ok   bool
	}{
		{"/dev/fd/3", 3, true},
		{"/proc/self/fd/17", 17, true},
		{"/dev/fd/007", 7, true},
		{"/dev/fd/", 0, false},
		{"/dev/fd/3/", 0, false},
		{"/dev/fd/-3", 0, false},
		{"/dev/fd/+3", 0, false},
		{"/dev/fd/3a", 0, false},
		{"/dev/fd/ 3", 0, false},
		{"/proc/1/fd/3", 0, false},
		{"/proc/self/fd", 0, false},
		{"dev/fd/3", 0, false},
		{"//dev/fd/3", 0, false},
		{"/dev/fd/99999999999999999999", 0, false},
		{"/run/secrets/token", 0, false},
	} {
		fd, ok := fdNumber(c.path)
		if fd != c.fd || ok != c.ok {
			t.Errorf("fdNumber(%q) = %d, %v; want %d, %v", c.path, fd, ok, c.fd, c.ok)
		}
	}
}

// TestFromFileClosesTheInheritedDescriptorItRead: a secret read from
// /dev/fd/N, N a descriptor the process inherited (not close-on-exec),
// leaves N closed, so that no command the process starts inherits it; one
// that is close-on-exec (Go's own) stays open.
func TestFromFileClosesTheInheritedDescriptorItRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inherited, err := unix.Dup(int(f.Fd())) // as a shell's 5<token: not close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromFile("/dev/fd/" + strconv.Itoa(inherited))
	if err != nil || got != "s3cret" {
		t.Fatalf("FromFile = %q, %v", got, err)
	}
	if _, err := unix.FcntlInt(uintptr(inherited), unix.F_GETFD, 0); err != unix.EBADF {
		unix.Close(inherited)
		t.Errorf("descriptor %d, inherited and read, is still open (fcntl: %v)", inherited, err)
	}
	if got, err := FromFile("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err != nil || got != "s3cret" {
		t.Fatalf("FromFile of Go's own descriptor = %q, %v", got, err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0); err != nil {
		t.Errorf("Go's own close-on-exec descriptor was closed: %v", err)
	}
}
