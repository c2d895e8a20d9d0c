package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// prepareDataDir makes the service's data directory private, whatever
// existed before: the directory and its subdirectories mode 0700, its
// files 0600 (the token, the database, its WAL and shared memory). It
// refuses, saying why, a directory it does not own or cannot tighten:
// the token and the agents' secrets live there.
func prepareDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if owner, mine := ownedBySelf(fi); !mine {
		return fmt.Errorf("data directory %s belongs to uid %d, not to the user corral serve runs as: pick a directory of its own (--data), or chown it", dir, owner)
	}
	if err := tighten(dir, fi, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		switch {
		case fi.IsDir():
			err = tighten(p, fi, 0o700)
		case fi.Mode().IsRegular():
			err = tighten(p, fi, 0o600)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tighten removes every permission beyond want from path.
func tighten(path string, fi fs.FileInfo, want fs.FileMode) error {
	perm := fi.Mode().Perm()
	if perm&^want == 0 {
		return nil
	}
	if err := os.Chmod(path, perm&want); err != nil {
		return fmt.Errorf("%s has mode %v, open to other users, and could not be made private: %w (chmod it to %v, or pick another --data)", path, perm, err, want)
	}
	return nil
}
