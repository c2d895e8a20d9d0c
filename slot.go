package corral

import "time"

// Slot is one held capacity slot of an agent.
type Slot struct {
	No          int       `json:"slot"`
	ExecutionID string    `json:"execution_id"`
	Since       time.Time `json:"since"`
}

// AgentStats counts an agent's executions by status and its held slots.
type AgentStats struct {
	Agent     string         `json:"agent"`
	Capacity  int            `json:"capacity"`
	SlotsUsed int            `json:"slots_used"`
	ByStatus  map[Status]int `json:"by_status"`
}
