//go:build !mutation_servescrub

package main

import (
	"fmt"

	"github.com/corralrun/corral/internal/secret"
)

// serveSecrets are the secrets corral serve takes from its environment at
// start, before it can run anything: CORRAL_TOKEN and CORRAL_DB leave the
// environment its tasks could inherit and the environment block that
// /proc/PID/environ shows (package secret).
type serveSecrets struct {
	token, db string
}

// takeServeSecrets takes CORRAL_TOKEN and CORRAL_DB out of the process's
// environment. It fails when one could not be scrubbed from the block.
func takeServeSecrets() (serveSecrets, error) {
	var s serveSecrets
	var err error
	if s.token, err = secret.FromEnv("CORRAL_TOKEN"); err != nil {
		return s, fmt.Errorf("%w: give the token in the data directory's token file instead", err)
	}
	if s.db, err = secret.FromEnv("CORRAL_DB"); err != nil {
		return s, fmt.Errorf("%w: give the database URL with --db instead", err)
	}
	return s, nil
}
