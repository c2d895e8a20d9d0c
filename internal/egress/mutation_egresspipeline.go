//go:build mutation_egresspipeline

// Mutant: a plain-HTTP client's pipelined requests reach the origin.
// Guarantee: 8. confinement that holds: a plain-HTTP connection carries one request, to the host its URI names
// Caught: ./internal/egress TestPlainHTTPPipelinedRequestNeverReachesTheOrigin

package egress

import (
	"bufio"
	"io"
)

// afterRequest, mutated for the CI's mutation step (.ci/mutations):
// what a plain-HTTP client sends after its request goes on to the
// upstream, until the client stops or the exchange ends. Built only with
// the tag mutation_egresspipeline.
func afterRequest(up io.Writer, br *bufio.Reader) { br.WriteTo(up) }
