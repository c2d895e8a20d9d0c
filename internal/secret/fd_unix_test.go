//go:build unix

package secret

import "testing"

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
