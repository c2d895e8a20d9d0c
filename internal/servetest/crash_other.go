//go:build !linux

package servetest

// Crash kills the service by its pid as a crash would; elsewhere than on
// Linux nothing binds its runs' trees to it to kill first.
func (s *Server) Crash() { s.Kill9() }
