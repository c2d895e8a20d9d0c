// Package shimprog says which program a supervisor starts its shims from
// (a run's init, an enclosure's holder, the cgroup tier's guardian; see
// internal/shim).
//
// Every program that imports proc has the shim in it, so the floor is the
// program itself, re-executed through /proc/self/exe. But a shim's start
// is a whole program's start, paid once per run or per supervisor, and
// corral's own binary links the CLI, the MCP server and the task service:
// its start costs three small Go programs'. So the corral command ships a
// companion, corral-shim (cmd/corral-shim), built from internal/shim and
// what it imports alone, and its runs start their shims from it when it
// sits beside corral's executable and was built from the same source (the
// same module version, VCS revision and state, Go release, target and
// build tags). Anything else — another program embedding proc, a
// companion from another build, none at all — starts its shims from
// itself, as before: the guarantees are the same, only the start is
// slower.
package shimprog
