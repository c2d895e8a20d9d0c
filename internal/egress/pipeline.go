//go:build !mutation_egresspipeline

package egress

import (
	"bufio"
	"io"
)

// afterRequest is what becomes of what a plain-HTTP client sends after
// its request's body: none of it reaches the upstream, which was told
// Connection: close. A pipelined request could carry a Host that is not
// allowed, which a front end shared by several hosts would route to.
// What the client sends is dropped when its connection ends (linger).
func afterRequest(up io.Writer, br *bufio.Reader) {}
