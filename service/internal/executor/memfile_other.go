//go:build !linux

package executor

import (
	"errors"
	"os"
)

// memFile is Linux's: elsewhere the caller falls back to an unlinked
// temporary file.
func memFile(string) (*os.File, error) { return nil, errors.ErrUnsupported }
