package cliflag

// MCPCommands are the commands of the companion program corral-mcp, which
// corral executes in its place for them (the MCP SDK, its JSON Schema
// package and the shell tool are linked there, not into corral), with the
// summaries both programs' help gives them.
var MCPCommands = []struct{ Name, Summary string }{
	{"mcp", "serve the agent shell tool, or the task service's tools, over MCP (stdio or streamable HTTP)"},
	{"shell", "run commands in a persistent agent shell session and see the results"},
}

// ClientCommands are the commands of the companion program corral-client,
// the task service's client commands, which corral executes in its place
// for them (the service's Go client, and with it net/http, crypto/tls and
// crypto/x509, are linked there, not into corral), with the summaries both
// programs' help gives them.
var ClientCommands = []struct{ Name, Summary string }{
	{"submit", "submit a task to an agent of the task service"},
	{"ps", "list executions of the task service"},
	{"logs", "print (and follow) the log of an execution"},
	{"cancel", "cancel a queued or running execution"},
	{"agents", "list, create, change and delete agents of the task service"},
	{"schedules", "list, create, change, delete and trigger schedules of an agent"},
}
