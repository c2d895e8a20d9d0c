package cliflag

// MCPCommands are the commands of the companion program corral-mcp, which
// corral executes in its place for them (the MCP SDK, its JSON Schema
// package and the shell tool are linked there, not into corral), with the
// summaries both programs' help gives them.
var MCPCommands = []struct{ Name, Summary string }{
	{"mcp", "serve the agent shell tool, or the task service's tools, over MCP (stdio or streamable HTTP)"},
	{"shell", "run commands in a persistent agent shell session and see the results"},
}
