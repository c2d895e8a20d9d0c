package cliflag

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/corralrun/corral"
)

// Sandbox are the confinement flags that every command running commands
// takes (run, headless, mcp, shell), parsed the same way.
type Sandbox struct {
	mode, network, workdir               string
	writable, denyRead, hosts, unixSocks StringList
}

// SandboxHelp ends the usage of the commands that take the sandbox flags.
const SandboxHelp = `
Sandbox (docs/sandbox.md): --sandbox workspace lets commands write only the
working directory (--workdir), each --writable PATH and a private /tmp;
--sandbox read-only writes nothing but the private /tmp. Under a sandbox the
network is off (--network none) except the hosts --allow-host names, which
are reached through corral's proxy; the host's processes are invisible;
Unix sockets outside the writable roots cannot be connected to unless
--allow-unix-socket names them. Corral exits 125 rather than run a command
with less confinement than asked for.
`

// AddSandbox registers the flags on fs. workdirName is the name of the
// working-directory flag ("workdir", or "dir" where a command already had
// one).
func AddSandbox(fs *flag.FlagSet, workdirName string) *Sandbox {
	f := &Sandbox{}
	fs.StringVar(&f.mode, "sandbox", "off", "confine commands: off, read-only or workspace")
	fs.StringVar(&f.workdir, workdirName, "", "working directory, and the workspace under --sandbox workspace (default: the current one)")
	fs.StringVar(&f.network, "network", "none", "with --sandbox, the network: none (only --allow-host, through a proxy) or host")
	fs.Var(&f.writable, "writable", "with --sandbox workspace, another `PATH` commands may write (repeatable)")
	fs.Var(&f.denyRead, "deny-read", "with --sandbox, a `PATH` commands may not read (repeatable)")
	fs.Var(&f.hosts, "allow-host", "with --sandbox and --network none, a `HOST[:PORT]` reachable through corral's proxy (repeatable; *.example.com matches subdomains; localhost:PORT: that host loopback port, at the same address)")
	fs.Var(&f.unixSocks, "allow-unix-socket", "with --sandbox, a Unix socket `PATH` outside the writable roots commands may connect to (repeatable)")
	return f
}

// Dir returns the working directory asked for, absolute, or "" for the
// current one.
func (f *Sandbox) Dir() (string, error) {
	if f.workdir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(f.workdir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", abs)
	}
	return abs, nil
}

// Settings returns the sandbox asked for, relative paths made absolute,
// validated.
func (f *Sandbox) Settings() (corral.Sandbox, error) {
	var sb corral.Sandbox
	var err error
	if sb.Mode, err = corral.ParseSandboxMode(f.mode); err != nil {
		return sb, err
	}
	if sb.Network, err = corral.ParseNetwork(f.network); err != nil {
		return sb, err
	}
	abs := func(list []string) ([]string, error) {
		var out []string
		for _, p := range list {
			a, err := filepath.Abs(p)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		return out, nil
	}
	if sb.Writable, err = abs(f.writable); err != nil {
		return sb, err
	}
	if sb.DenyRead, err = abs(f.denyRead); err != nil {
		return sb, err
	}
	if sb.AllowUnixSockets, err = abs(f.unixSocks); err != nil {
		return sb, err
	}
	sb.AllowHosts = f.hosts
	return sb, sb.Validate()
}
