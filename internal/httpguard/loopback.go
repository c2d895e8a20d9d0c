package httpguard

import (
	"fmt"
	"net"
	"strings"
)

// IsLoopback reports whether host (a name or an address, with or without
// brackets, a zone or a trailing dot; no port) names this machine's
// loopback: "localhost" and the names under it (RFC 6761), or a loopback
// address (127.0.0.0/8, ::1). It is the one loopback rule of every server
// corral runs: which addresses may listen without a token, which origins
// a browser may call from, which Host names the service answers to.
func IsLoopback(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Split(host, "%")[0])
	return ip != nil && ip.IsLoopback()
}

// ListensOnLoopback reports whether a listen address (HOST:PORT) is
// reachable only from this machine. The error says how to write the
// address.
func ListensOnLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: want HOST:PORT, such as 127.0.0.1:7070", addr)
	}
	return host != "" && IsLoopback(host), nil
}
