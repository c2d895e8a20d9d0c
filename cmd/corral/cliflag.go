package main

import "github.com/corralrun/corral/internal/cliflag"

// What this program shares with corral-serve (internal/cliflag).
type (
	stringList   = cliflag.StringList
	webhookFlags = cliflag.Webhooks
)

var (
	addWebhookFlags = cliflag.AddWebhooks
	defaultDataDir  = cliflag.DefaultDataDir
)
