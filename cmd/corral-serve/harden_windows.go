package main

import "io/fs"

// hardenProcess has nothing to do on Windows: the data directory's ACL
// is the operator's to set.
func hardenProcess() error { return nil }

// hideMemory has nothing to do on Windows.
func hideMemory(bool) error { return nil }

// ownedBySelf cannot tell on Windows; it reports true.
func ownedBySelf(fs.FileInfo) (uint32, bool) { return 0, true }
