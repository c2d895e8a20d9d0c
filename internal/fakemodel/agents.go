package fakemodel

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// How to point the real agent CLIs at a Server. Tested with Claude Code
// 2.1.328 and Codex 0.169.0.

// FakeKey is the API key the helpers give the agents. The server takes any
// key; it fails authentication only when its scenario says so.
const FakeKey = "sk-fake-0123456789abcdef"

// CodexProvider, CodexModel and CodexKeyVar name what CodexArgs sets up:
// a model provider "fake" whose key is read from FAKE_API_KEY, and a model
// Codex has no metadata for, which it answers with plain function tools
// (exec_command, spawn_agent, …) rather than its code mode, and with a
// warning item ("Model metadata for `fake-model` not found").
const (
	CodexProvider = "fake"
	CodexModel    = "fake-model"
	CodexKeyVar   = "FAKE_API_KEY"
)

// ClaudeEnv is the environment that points Claude Code at s and keeps it
// from reaching anything else: no telemetry, error reports, update checks
// or other non-essential traffic. Callers add a HOME and a TMPDIR of their
// own (Claude Code writes under both), and, to use bypassPermissions as
// root, IS_SANDBOX=1.
func (s *Server) ClaudeEnv() []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + s.URL,
		"ANTHROPIC_API_KEY=" + FakeKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
	}
}

// CodexArgs are the flags of `codex exec` that make s Codex's model
// provider and turn off its analytics and update check. They go after
// "exec" and before the prompt.
func (s *Server) CodexArgs() []string {
	p := "model_providers." + CodexProvider + "."
	return []string{
		"-c", p + "name=" + CodexProvider,
		"-c", p + "base_url=" + s.URL + "/v1",
		"-c", p + "wire_api=responses",
		"-c", p + "env_key=" + CodexKeyVar,
		"-c", "model_provider=" + CodexProvider,
		"-c", "model=" + CodexModel,
		"-c", "analytics.enabled=false",
		"-c", "check_for_update_on_startup=false",
		"-c", "otel.exporter=none",
	}
}

// CodexEnv is the environment CodexArgs needs: the provider's key.
// Callers add a CODEX_HOME of their own (Codex writes its state there) and
// a HOME.
func (s *Server) CodexEnv() []string {
	return []string{CodexKeyVar + "=" + FakeKey}
}

// Agent is a real agent CLI pointed at a Server: its command line (the
// prompt last) and its whole environment, for a clean start.
type Agent struct {
	// Name is "claude" or "codex".
	Name string
	Args []string
	Env  []string
	// Home is the agent's HOME; Claude Code keeps its state in Home/.claude
	// (and Home/.claude.json), Codex in Home/.codex (its CODEX_HOME).
	Home string
}

// Claude returns Claude Code (the binary bin) set up to run one prompt
// against s in stream-json with bypassPermissions, extra flags before the
// prompt, home and tmp as its HOME and TMPDIR. As root, Claude Code refuses
// bypassPermissions unless IS_SANDBOX=1, which the environment then has.
func (s *Server) Claude(bin, home, tmp, prompt string, extra ...string) Agent {
	a := newAgent("claude", bin, home, tmp)
	a.Args = append(a.Args, "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	a.Args = append(append(a.Args, extra...), "--", prompt)
	a.Env = append(a.Env, s.ClaudeEnv()...)
	if os.Geteuid() == 0 {
		a.Env = append(a.Env, "IS_SANDBOX=1")
	}
	return a
}

// Codex returns Codex (the binary bin, a node script) set up to run one
// prompt against s with `codex exec --json` outside a git repository, extra
// flags before the prompt, home and tmp as its HOME and TMPDIR, and
// home/.codex, which it creates, as its CODEX_HOME.
func (s *Server) Codex(bin, home, tmp, prompt string, extra ...string) Agent {
	a := newAgent("codex", bin, home, tmp)
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o700)
	a.Args = append(a.Args, "exec", "--json", "--skip-git-repo-check")
	a.Args = append(append(append(a.Args, s.CodexArgs()...), extra...), "--", prompt)
	a.Env = append(append(a.Env, "CODEX_HOME="+codexHome), s.CodexEnv()...)
	return a
}

func newAgent(name, bin, home, tmp string) Agent {
	path := "/usr/local/bin:/usr/bin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		path = filepath.Dir(node) + ":" + path // codex is a node script
	}
	return Agent{
		Name: name,
		Args: []string{bin},
		Env:  []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8"},
		Home: home,
	}
}

// ForSandbox readies the agent to run under a corral sandbox, whose /tmp is
// private: its home moves to home (which must not be under /tmp), TMPDIR
// goes (the private /tmp serves), and Claude Code keeps all its state,
// .claude.json included, in home/.claude (CLAUDE_CONFIG_DIR). It returns
// the directory the agent writes its state to, created, for the sandbox's
// writable roots.
func (a *Agent) ForSandbox(home string) (state string) {
	state = filepath.Join(home, ".claude")
	if a.Name == "codex" {
		state = filepath.Join(home, ".codex")
	}
	os.MkdirAll(state, 0o700)
	var env []string
	for _, kv := range a.Env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="):
		case strings.HasPrefix(kv, "HOME="):
			env = append(env, "HOME="+home)
		case strings.HasPrefix(kv, "CODEX_HOME="):
			env = append(env, "CODEX_HOME="+state)
		default:
			env = append(env, kv)
		}
	}
	if a.Name == "claude" {
		env = append(env, "CLAUDE_CONFIG_DIR="+state)
	}
	if a.Name == "codex" {
		// Codex's own sandbox needs user namespaces, which corral's refuses
		// inside: corral's sandbox holds it instead.
		if i := slices.Index(a.Args, "--"); i >= 0 {
			a.Args = slices.Insert(a.Args, i, "--sandbox", "danger-full-access")
		}
	}
	a.Env, a.Home = env, home
	return state
}
