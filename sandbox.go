package corral

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
)

// SandboxMode says how much of the file system a sandboxed run may change.
type SandboxMode string

const (
	// SandboxOff (the zero value) runs the command unconfined.
	SandboxOff SandboxMode = ""

	// SandboxReadOnly lets the run read the file system (except what is
	// denied) and write nothing but its private /tmp.
	SandboxReadOnly SandboxMode = "read-only"

	// SandboxWorkspace lets the run write its working directory and the
	// extra writable roots, and its private /tmp; nothing else.
	SandboxWorkspace SandboxMode = "workspace"
)

// String returns the mode's name; the zero value prints as "off".
func (m SandboxMode) String() string {
	if m == SandboxOff {
		return "off"
	}
	return string(m)
}

// MarshalText writes the mode's name ("off" for the zero value).
func (m SandboxMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (m *SandboxMode) UnmarshalText(b []byte) error {
	v, err := ParseSandboxMode(string(b))
	*m = v
	return err
}

// ParseSandboxMode parses "off", "read-only" or "workspace".
func ParseSandboxMode(s string) (SandboxMode, error) {
	switch m := SandboxMode(s); m {
	case "off", "":
		return SandboxOff, nil
	case SandboxReadOnly, SandboxWorkspace:
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q: want off, read-only or workspace", s)
}

// Network says what a sandboxed run may reach over the network.
type Network string

const (
	// NetworkNone (the zero value) gives the run a network namespace of its
	// own with only a loopback interface: nothing outside is reachable, the
	// host's loopback listeners and abstract Unix sockets included. Hosts
	// named in Sandbox.AllowHosts are reachable through corral's proxy.
	NetworkNone Network = ""

	// NetworkHost leaves the run in the host's network.
	NetworkHost Network = "host"
)

// String returns the setting's name; the zero value prints as "none".
func (n Network) String() string {
	if n == NetworkNone {
		return "none"
	}
	return string(n)
}

// MarshalText writes the setting's name ("none" for the zero value).
func (n Network) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText reads a name written by MarshalText.
func (n *Network) UnmarshalText(b []byte) error {
	v, err := ParseNetwork(string(b))
	*n = v
	return err
}

// ParseNetwork parses "none" or "host".
func ParseNetwork(s string) (Network, error) {
	switch s {
	case "none", "":
		return NetworkNone, nil
	case "host":
		return NetworkHost, nil
	}
	return "", fmt.Errorf("unknown network setting %q: want none or host", s)
}

// Sandbox is the confinement asked for a run. The zero value asks for none.
// Under a sandbox a run writes only its writable roots (the working
// directory and Writable, in workspace mode) and a private /tmp, reads
// everything else except DenyRead, reaches the network only as Network and
// AllowHosts say, connects to no pathname Unix socket outside its writable
// roots except AllowUnixSockets, cannot see or signal the host's processes,
// and gains no privilege. Corral refuses to run a command with less
// confinement than was asked for.
type Sandbox struct {
	// Mode enables the sandbox and says what the run may write.
	Mode SandboxMode `json:"mode,omitempty"`

	// Writable lists directories the run may write besides its working
	// directory (workspace mode only).
	Writable []string `json:"writable,omitempty"`

	// DenyRead lists files and directories the run may not read: they
	// appear empty.
	DenyRead []string `json:"deny_read,omitempty"`

	// Network is the network the run is in.
	Network Network `json:"network,omitempty"`

	// AllowHosts lists HOST or HOST:PORT the run may reach through corral's
	// HTTP proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set for it) when
	// Network is none. A HOST starting with "*." matches its subdomains.
	//
	// A port of the host's loopback (localhost:PORT, 127.0.0.1:PORT,
	// [::1]:PORT: IsLoopbackHost) is reachable at the same address inside
	// the sandbox, by any TCP client, proxy variables or not: corral
	// listens there in the run's network namespace and relays each
	// connection to the host's port, byte for byte both ways. No other
	// port of the host's loopback is reachable; a loopback entry must name
	// its port.
	AllowHosts []string `json:"allow_hosts,omitempty"`

	// AllowUnixSockets lists pathname Unix sockets outside the writable
	// roots that the run may connect to (a Docker or D-Bus socket is root on
	// the machine: name one only on purpose).
	AllowUnixSockets []string `json:"allow_unix_sockets,omitempty"`
}

// Enabled reports whether a sandbox is asked for.
func (s Sandbox) Enabled() bool { return s.Mode != SandboxOff }

// Validate checks the settings for contradictions and malformed entries.
// Paths must be absolute; hosts must be HOST or HOST:PORT.
func (s Sandbox) Validate() error {
	if _, err := ParseSandboxMode(string(s.Mode)); err != nil {
		return err
	}
	if _, err := ParseNetwork(string(s.Network)); err != nil {
		return err
	}
	if !s.Enabled() {
		if len(s.Writable)+len(s.DenyRead)+len(s.AllowHosts)+len(s.AllowUnixSockets) > 0 || s.Network != NetworkNone {
			return errors.New("sandbox settings given without a sandbox mode (read-only or workspace)")
		}
		return nil
	}
	if s.Mode == SandboxReadOnly && len(s.Writable) > 0 {
		return errors.New("sandbox: writable roots need workspace mode")
	}
	if s.Network == NetworkHost && len(s.AllowHosts) > 0 {
		return errors.New("sandbox: allowed hosts go through the proxy of network none; network host reaches everything already")
	}
	for _, list := range [][]string{s.Writable, s.DenyRead, s.AllowUnixSockets} {
		for _, p := range list {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("sandbox: path %q is not absolute", p)
			}
		}
	}
	for _, h := range s.AllowHosts {
		host, port, err := SplitAllowedHost(h)
		if err != nil {
			return err
		}
		if port == 0 && IsLoopbackHost(host) {
			return fmt.Errorf("sandbox: allowed host %q is the host's loopback: name its port (%s:PORT), only that port is reachable", h, h)
		}
	}
	return nil
}

// IsLoopbackHost reports whether host (as SplitAllowedHost returns it)
// names the machine's own loopback: localhost, an address of
// 127.0.0.0/8, or ::1.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && a.Unmap().IsLoopback()
}

// SplitAllowedHost splits an AllowHosts entry into its host (lower case)
// and port (0 for any port).
func SplitAllowedHost(entry string) (host string, port int, err error) {
	host = entry
	if h, p, ok := splitHostPort(entry); ok {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("sandbox: allowed host %q: bad port", entry)
		}
		host, port = h, n
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	name := strings.TrimPrefix(host, "*.")
	if name == "" || strings.ContainsAny(name, "/ *@") {
		return "", 0, fmt.Errorf("sandbox: allowed host %q: want HOST or HOST:PORT", entry)
	}
	return host, port, nil
}

// splitHostPort splits "host:port" and "[v6]:port" (as net.SplitHostPort
// does, without the net package, which the sandbox's init must not load).
func splitHostPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return "", "", false
		}
		return s[1:end], s[end+2:], true
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.Count(s, ":") > 1 {
		return "", "", false // no port, or a bare IPv6 address
	}
	return s[:i], s[i+1:], true
}

// SandboxReport says what held a sandboxed run.
type SandboxReport struct {
	// Mode and Network are the settings the run had.
	Mode    SandboxMode `json:"mode"`
	Network Network     `json:"network"`

	// Writable lists the writable roots as resolved (absolute, symbolic
	// links followed); the private /tmp is not listed.
	Writable []string `json:"writable"`

	// Mechanisms names what enforced the sandbox, such as "user namespace",
	// "landlock", "seccomp".
	Mechanisms []string `json:"mechanisms"`

	// LandlockABI is the Landlock ABI version used, 0 if none.
	LandlockABI int `json:"landlock_abi,omitempty"`

	// DeniedHosts lists the HOST:PORT the run tried to reach through the
	// proxy and was refused, in order of first attempt.
	DeniedHosts []string `json:"denied_hosts,omitempty"`
}
