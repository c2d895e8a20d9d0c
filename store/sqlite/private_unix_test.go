//go:build unix

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store/sqlite"
)

// TestDatabaseFilesArePrivate: whatever the umask and whatever modes an
// earlier version left, the database, its WAL and its shared-memory index
// are 0600 once the store is open and has written.
func TestDatabaseFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, existed := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "corral.db")
		if existed {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Chmod(p, 0o644)
			}
		}
		ctx := context.Background()
		s, err := sqlite.Open(ctx, sqlite.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		a := &corral.Agent{Name: "secretive", Kind: corral.KindShell, Env: map[string]string{"API_KEY": "v"}}
		a.Normalize()
		if err := s.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("existed %v: %v", existed, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("existed %v: %s has mode %v, want 0600", existed, filepath.Base(p), fi.Mode().Perm())
			}
		}
		s.Close()
	}
}
