package shell

import (
	"context"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

// DefaultProbeTools are the programs Environment looks for when
// Tool.ProbeTools is nil.
var DefaultProbeTools = []string{"git", "go", "node", "npm", "python3", "pip3", "cargo", "rustc", "java", "make", "gcc", "docker", "rg", "jq"}

// Environment describes where commands run, for an agent's instructions.
type Environment struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// Shell is the shell's path; ShellFamily is bash, sh, zsh or pwsh;
	// ShellVersion is what it reports about itself.
	Shell        string `json:"shell"`
	ShellFamily  string `json:"shell_family"`
	ShellVersion string `json:"shell_version,omitempty"`
	// Cwd is the working directory (the session's, for a session).
	Cwd string `json:"cwd"`
	// Persistent reports that commands share state (a session).
	Persistent bool `json:"persistent"`
	// Tools maps each probed program to its version, or "not found".
	Tools map[string]string `json:"tools"`
	// DefaultTimeoutMS and MaxTimeoutMS are the command timeouts;
	// MaxOutputChars is the output budget of a result.
	DefaultTimeoutMS int64 `json:"default_timeout_ms"`
	MaxTimeoutMS     int64 `json:"max_timeout_ms"`
	MaxOutputChars   int   `json:"max_output_chars"`
	// OutputCharsCap is the largest output budget a command may ask for.
	OutputCharsCap int `json:"output_chars_cap"`
	// Sandbox says what confines the commands: its mode, network and
	// writable roots, and what enforces it; nil when nothing does.
	Sandbox *corral.SandboxReport `json:"sandbox,omitempty"`
}

// probeTimeout bounds each version query.
const probeTimeout = 5 * time.Second

var versionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?`)
})

// Environment probes the shell and the tools of Tool.ProbeTools, each
// under the supervision core with a short timeout, in parallel. The
// environment passed to them is the Tool's.
func (t *Tool) Environment(ctx context.Context) (*Environment, error) {
	e, err := t.environment(ctx, t.Dir, nil, nil)
	if err == nil && t.Sandbox.Enabled() {
		e.Sandbox = &corral.SandboxReport{Mode: t.Sandbox.Mode, Network: t.Sandbox.Network, Writable: t.Sandbox.Writable}
	}
	return e, err
}

// Environment probes as Tool.Environment does, in the session's directory
// and environment.
func (s *Session) Environment(ctx context.Context) (*Environment, error) {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	e, err := s.tool.environment(ctx, st.Dir, st.Env, s.enc)
	if err == nil {
		e.Persistent = true
		e.Sandbox = s.Sandbox()
	}
	return e, err
}

// environment probes in dir with env, inside enc when set.
func (t *Tool) environment(ctx context.Context, dir string, env []string, enc *proc.Enclosure) (*Environment, error) {
	if err := t.init(); err != nil {
		return nil, err
	}
	e := &Environment{
		OS: runtime.GOOS, Arch: runtime.GOARCH, Shell: t.shell, ShellFamily: string(t.family), Cwd: dir,
		Tools:            map[string]string{},
		DefaultTimeoutMS: t.timeout(0).Milliseconds(), MaxTimeoutMS: t.timeout(1 << 62).Milliseconds(),
		MaxOutputChars: t.maxChars(0), OutputCharsCap: t.charsCap(),
	}
	tools := t.ProbeTools
	if tools == nil {
		tools = DefaultProbeTools
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		v := t.shellVersion(ctx, dir, env, enc)
		mu.Lock()
		e.ShellVersion = v
		mu.Unlock()
	}()
	for _, name := range tools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := t.toolVersion(ctx, name, dir, env, enc)
			mu.Lock()
			e.Tools[name] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return e, nil
}

// probeSpec runs a probe as the commands run: in dir with env (a
// session's) or the Tool's environment, in the session's enclosure or
// under the Tool's sandbox.
func (t *Tool) probeSpec(args []string, dir string, env []string, enc *proc.Enclosure) *proc.Spec {
	spec := &proc.Spec{Path: t.shell, Args: append([]string{t.shell}, args...), Dir: dir, Timeout: probeTimeout,
		Grace: -1, MaxOutput: 4096, Containment: t.Containment, Label: "shell-probe"}
	if enc != nil {
		spec.Enclosure = enc
	} else {
		spec.Sandbox = t.Sandbox
	}
	if env != nil {
		spec.EnvMode, spec.Env = corral.EnvClean, env
	} else {
		spec.EnvMode, spec.EnvAllow, spec.Env = t.EnvMode, t.EnvAllow, t.Env
	}
	return spec
}

func (t *Tool) shellVersion(ctx context.Context, dir string, env []string, enc *proc.Enclosure) string {
	var script string
	switch t.family {
	case famBash:
		script = `printf %s "$BASH_VERSION"`
	case famZsh:
		script = `printf %s "$ZSH_VERSION"`
	case famPwsh:
		script = `$PSVersionTable.PSVersion.ToString()`
	default:
		return ""
	}
	r, err := proc.Run(ctx, t.probeSpec(oneShotArgs(t.family, script), dir, env, enc))
	if err != nil || !r.Success() {
		return ""
	}
	return strings.TrimSpace(r.Stdout.Text())
}

func (t *Tool) toolVersion(ctx context.Context, name, dir string, env []string, enc *proc.Enclosure) string {
	if strings.ContainsAny(name, " \t\n;&|$`'\"\\<>(){}*?[]") {
		return "not probed: not a plain program name"
	}
	flag := "--version"
	switch name {
	case "go":
		flag = "version"
	case "java":
		flag = "-version"
	}
	script := "command -v " + name + " >/dev/null 2>&1 || exit 127; " + name + " " + flag + " 2>&1"
	if t.family == famPwsh {
		script = "& " + name + " " + flag + " 2>&1"
	}
	r, err := proc.Run(ctx, t.probeSpec(oneShotArgs(t.family, script), dir, env, enc))
	switch {
	case err != nil:
		return "unknown: " + err.Error()
	case r.ExitCode == 127:
		return "not found"
	case r.TimedOut:
		return "unknown: version query timed out"
	}
	out := r.Stdout.Text()
	if v := versionRE().FindString(out); v != "" {
		return v
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if line == "" {
		return "found (no version reported)"
	}
	return line
}
