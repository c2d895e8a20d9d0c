package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// makePrivate makes the database file and its write-ahead log and shared
// memory index readable and writable by their owner only, whatever they
// were (agents' env values are in the database): it creates the database
// file with mode 0600 when it does not exist, so that SQLite, which gives
// its -wal and -shm files the mode of the database, creates those 0600 too,
// and tightens the modes of the files that exist. It fails, saying why,
// when it cannot.
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite store: open %s: %w (is the directory writable by this user?)", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlite store: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("sqlite store: %s is not a regular file (%v): refusing to use it", p, fi.Mode().Type())
		}
		if fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("sqlite store: %s is readable by other users (mode %v) and could not be made private: %w (chmod 600 it, or run as its owner)", p, fi.Mode().Perm(), err)
		}
	}
	return nil
}
