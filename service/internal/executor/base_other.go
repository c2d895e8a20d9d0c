//go:build !windows

package executor

// platformBase names the variables of the service's environment a run
// needs to start at all on this platform: none beyond the base.
var platformBase []string
