// Package api serves corral's task service over HTTP: a JSON API
// versioned under /v1, live execution logs as Server-Sent Events, health
// and Prometheus metrics. docs/api.md documents every route and shape.
//
// Every route but /healthz and /readyz needs "Authorization: Bearer TOKEN" (compared
// in constant time) unless Config.Token is empty; a web UI mounted at /
// can authenticate its own requests with Config.SessionAuth. Request
// bodies are limited in size and decoded strictly: unknown fields, bad
// types and trailing data get a 400 with a message that says what to fix.
// Handlers never answer 500 for bad input; a 500 means the service
// itself failed.
package api
