package corral

import (
	"encoding/json"
	"time"
)

// SessionState is the saved state of a headless agent's session: its
// CLI's session file (Claude Code's transcript under its projects
// directory, Codex's rollout file), kept by the service between the
// attempts of a run so that an attempt on any worker can resume it.
type SessionState struct {
	SessionID string `json:"session_id"`
	// CLI is "claude" or "codex"; Path is the file's path under the CLI's
	// state directory (CLAUDE_CONFIG_DIR or ~/.claude, CODEX_HOME or
	// ~/.codex), where a resumed attempt restores it.
	CLI  string `json:"cli"`
	Path string `json:"path"`
	// Data is the file, compressed with gzip.
	Data []byte `json:"-"`
	// CostUSD and Usage are what the CLI last reported for the session as
	// a whole: a resumed CLI reports them counted from the session's
	// start, so an attempt's own share is what it reports less these.
	CostUSD   float64         `json:"cost_usd,omitempty"`
	Usage     json.RawMessage `json:"usage,omitempty"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// MaxSessionState bounds the compressed size of a SessionState's Data.
const MaxSessionState = 32 << 20
