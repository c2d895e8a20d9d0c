package sandbox_test

import (
	"slices"
	"testing"

	"github.com/corralrun/corral/internal/sandbox"
)

// A hidden path shows wherever a mount of its file system shows a
// directory that holds it, or a part of it: the guard covers each.
func TestGuardFindsEveryMountThatShowsAHiddenPath(t *testing.T) {
	const table = `27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 254:0 /var/lib /srv/lib rw,relatime - ext4 /dev/vda rw
41 27 254:0 /var/lib/corral /mnt/corral rw,relatime - ext4 /dev/vda rw
42 27 254:0 /var/lib/corral/logs /mnt/logs rw,relatime - ext4 /dev/vda rw
43 27 254:0 /home /home rw,relatime - ext4 /dev/vda rw
44 27 0:50 / /var/lib/other rw,relatime - tmpfs tmpfs rw
45 27 254:0 /var/lib/corral\040x /mnt/space rw,relatime - ext4 /dev/vda rw
`
	got := sandbox.GuardAliases(table, 27, "/var/lib/corral")
	want := []string{"/var/lib/corral", "/srv/lib/corral", "/mnt/corral", "/mnt/logs"}
	if !slices.Equal(got, want) {
		t.Errorf("aliases of /var/lib/corral: %q, want %q", got, want)
	}
	// Seen from a bind mount, the same file system path and so the same
	// aliases.
	if got := sandbox.GuardAliases(table, 40, "/srv/lib/corral"); !slices.Equal(got, want) {
		t.Errorf("aliases of /srv/lib/corral: %q, want %q", got, want)
	}
	// A directory whose name only begins like the hidden one is not it.
	if got := sandbox.GuardAliases(table, 27, "/var/lib/corral x"); !slices.Equal(got, []string{"/var/lib/corral x", "/srv/lib/corral x", "/mnt/space"}) {
		t.Errorf("aliases of a name with a space: %q", got)
	}
	if got := sandbox.GuardAliases(table, 99, "/var/lib/corral"); got != nil {
		t.Errorf("an unknown mount: %q", got)
	}
}
