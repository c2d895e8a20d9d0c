package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/corralrun/corral/internal/secret"
)

// mcpTokenEnv is the documented variable for corral mcp's bearer token.
const mcpTokenEnv = "CORRAL_MCP_TOKEN"

// mcpTokenFlags registers --token-file and the deprecated --token, and
// takes CORRAL_MCP_TOKEN out of the environment at once, before any
// command can start (see package secret): commands never see the token,
// in their environment or in the server's /proc/PID/environ and cmdline.
// The returned function gives the token after parsing.
func mcpTokenFlags(fs *flag.FlagSet) func() (string, error) {
	fromEnv, envErr := secret.FromEnv(mcpTokenEnv)
	file := fs.String("token-file", "", "read the bearer token HTTP clients must send from `FILE`: a file only its owner can read, or a descriptor such as <(command) (default: $"+mcpTokenEnv+")")
	arg := fs.String("token", "", "deprecated: the token is visible to every local user in the command line; use --token-file or $"+mcpTokenEnv)
	return func() (string, error) {
		if envErr != nil {
			return "", fmt.Errorf("%w: pass the token with --token-file instead", envErr)
		}
		switch {
		case *file != "" && *arg != "":
			return "", errors.New("--token-file and --token both given: give one")
		case *file != "":
			t, err := secret.FromFile(*file)
			if err != nil {
				return "", fmt.Errorf("--token-file: %w", err)
			}
			return t, nil
		case *arg != "":
			t := strings.Clone(*arg)
			fmt.Fprintln(os.Stderr, "corral mcp: --token is deprecated: the command line shows the token to every local user (it is now overwritten there, but was readable until now); use --token-file FILE or "+mcpTokenEnv)
			if err := secret.ScrubArg(t); err != nil {
				fmt.Fprintln(os.Stderr, "corral mcp: --token:", err)
			}
			return t, nil
		}
		return fromEnv, nil
	}
}
