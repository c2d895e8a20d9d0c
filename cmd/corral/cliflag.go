package main

import "github.com/corralrun/corral/internal/cliflag"

// What this program shares with its companions (internal/cliflag).
type (
	stringList   = cliflag.StringList
	webhookFlags = cliflag.Webhooks
	sandboxFlags = cliflag.Sandbox
)

const sandboxHelp = cliflag.SandboxHelp

var (
	addWebhookFlags = cliflag.AddWebhooks
	addSandboxFlags = cliflag.AddSandbox
	defaultDataDir  = cliflag.DefaultDataDir
	nonNegDuration  = cliflag.NonNegDuration
	graceFlag       = cliflag.Grace
	negIfZero       = cliflag.NegIfZero
)
