package main

import "testing"

// TestEveryClientCommandIsRegistered: each command corral lists as
// corral-client's (cliflag.ClientCommands) is one corral-client has, and
// it has no other.
func TestEveryClientCommandIsRegistered(t *testing.T) {
	if err := program.Check(); err != nil {
		t.Fatal(err)
	}
}
