// Command linkonly links package redact and does not use it:
// TestTablesAreMadeOnFirstUseNotAtStart reads its initialisation.
package main

import "github.com/corralrun/corral/internal/redact"

var _ = redact.New

func main() {}
