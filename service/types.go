package service

import "github.com/corralrun/corral/store"

// The records of the service are those of the store; the API serves them
// as JSON with the field names of their tags.
type (
	Agent     = store.Agent
	Execution = store.Execution
	Schedule  = store.Schedule
	Slot      = store.Slot
	Duration  = store.Duration
	AgentKind = store.AgentKind
	// AgentActivity is what Activity counts of one agent.
	AgentActivity = store.AgentActivity
)
