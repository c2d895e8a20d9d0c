package main

import "github.com/corralrun/corral/internal/cliflag"

// What this program shares with corral and corral-serve (internal/cliflag).
type (
	stringList   = cliflag.StringList
	webhookFlags = cliflag.Webhooks
)

var (
	addWebhookFlags = cliflag.AddWebhooks
	defaultDataDir  = cliflag.DefaultDataDir
)

// stopSignals are the signals that end a command.
var stopSignals = cliflag.StopSignals
