package corral

import "time"

// MissedPolicy says what a schedule does with fires that passed while no
// worker was there to take them (the service was down).
type MissedPolicy string

const (
	// MissedSkip drops missed fires; the schedule waits for its next time.
	MissedSkip MissedPolicy = "skip"
	// MissedRunOnce runs the task once for all the fires that were missed.
	MissedRunOnce MissedPolicy = "run_once"
)

// Schedule fires a task for an agent on a cron expression.
type Schedule struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Cron is a cron expression with five fields, or six with seconds
	// first, or a descriptor such as @hourly or @every 90s.
	Cron     string       `json:"cron"`
	TimeZone string       `json:"time_zone"` // IANA name; empty means UTC
	Input    string       `json:"input"`
	Timeout  Duration     `json:"timeout,omitempty"`
	Enabled  bool         `json:"enabled"`
	Missed   MissedPolicy `json:"missed"`

	NextFireAt    *time.Time `json:"next_fire_at,omitempty"`
	LastFireAt    *time.Time `json:"last_fire_at,omitempty"`
	LastExecution string     `json:"last_execution_id,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}
