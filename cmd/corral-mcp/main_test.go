package main

import "testing"

// TestEveryMCPCommandIsRegistered: each command corral lists as
// corral-mcp's (cliflag.MCPCommands) is one corral-mcp has, and it has no
// other.
func TestEveryMCPCommandIsRegistered(t *testing.T) {
	if err := program.Check(); err != nil {
		t.Fatal(err)
	}
}
