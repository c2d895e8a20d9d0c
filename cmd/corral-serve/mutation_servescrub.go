//go:build mutation_servescrub

// Mutant: corral serve reads CORRAL_TOKEN and CORRAL_DB and leaves them in its environment block (/proc/PID/environ).
// Guarantee: 8. no task reaches the service's secrets: not in its /proc/PID/environ
// Caught: ./cmd/corral TestServeTakesItsSecretsOutOfItsEnvironment/token
// Caught: ./cmd/corral TestServeTakesItsSecretsOutOfItsEnvironment/database

package main

import "os"

// serveSecrets, as in servetake.go.
type serveSecrets struct {
	token, db string
}

// takeServeSecrets, mutated for the CI's mutation step (.ci/mutations):
// it reads the variables and scrubs nothing. Built only with the tag
// mutation_servescrub.
func takeServeSecrets() (serveSecrets, error) {
	return serveSecrets{token: os.Getenv("CORRAL_TOKEN"), db: os.Getenv("CORRAL_DB")}, nil
}
