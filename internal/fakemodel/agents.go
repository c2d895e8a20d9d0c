package fakemodel

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
