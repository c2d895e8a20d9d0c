package snapshot

import "golang.org/x/sys/unix"

// inMemory reports whether dir is on a memory file system (tmpfs).
func inMemory(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}
