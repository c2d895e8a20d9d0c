package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/internal/secret"
	"github.com/corralrun/corral/mcpserver"
)

// mcpServiceFlags are corral mcp's flags for serving the task service's
// tools (--service).
type mcpServiceFlags struct {
	url, tokenFile, data string
	maxWait              time.Duration
}

func addMCPServiceFlags(fs *flag.FlagSet) *mcpServiceFlags {
	f := &mcpServiceFlags{}
	fs.StringVar(&f.url, "service", "", "serve the task service's tools for the service at `URL` (HOST:PORT or http(s)://HOST:PORT) instead of the shell tool")
	fs.StringVar(&f.tokenFile, "service-token-file", "", "with --service, read the service's API token from `FILE` (a file only its owner can read, or a descriptor such as <(command)); default: $CORRAL_TOKEN, else the token file of --data")
	fs.StringVar(&f.data, "data", cliflag.DefaultDataDir(), "with --service, the service's data `DIR`, for its token file")
	fs.DurationVar(&f.maxWait, "max-wait", mcpserver.DefaultMaxWait, "with --service, the longest wait_execution may wait in one call")
	return f
}

// serviceOnly are the flags that mean something with --service; the
// others configure the shell tool, which is not served then.
var serviceOnly = map[string]bool{
	"service": true, "service-token-file": true, "data": true, "max-wait": true,
	"http": true, "token-file": true, "token": true, "idle": true, "client-idle": true,
	"allow-origin": true, "v": true, "max-output-chars": true, "output-chars-cap": true,
}

// service builds the Service of --service. The token is found as the
// client commands find it (CORRAL_TOKEN, else the data directory's token
// file), or read from --service-token-file; it never comes from the
// command line. CORRAL_TOKEN is taken out of the environment.
func (f *mcpServiceFlags) service(fs *flag.FlagSet) (*mcpserver.Service, error) {
	var shellFlags []string
	fs.Visit(func(fl *flag.Flag) {
		if !serviceOnly[fl.Name] {
			shellFlags = append(shellFlags, "--"+fl.Name)
		}
	})
	if len(shellFlags) > 0 {
		return nil, fmt.Errorf("%s configure the shell tool, which --service does not serve: drop them, or run a second corral mcp for the shell", strings.Join(shellFlags, ", "))
	}
	if f.maxWait <= 0 {
		return nil, errors.New("--max-wait must be positive")
	}
	token, err := f.token()
	if err != nil {
		return nil, err
	}
	chars, _ := fs.Lookup("max-output-chars").Value.(flag.Getter).Get().(int)
	charsCap, _ := fs.Lookup("output-chars-cap").Value.(flag.Getter).Get().(int)
	if chars <= 0 || charsCap <= 0 {
		return nil, errors.New("--max-output-chars and --output-chars-cap must be positive")
	}
	return &mcpserver.Service{
		Client:         client.New(f.url, token),
		MaxOutputChars: chars, OutputCharsCap: charsCap,
		MaxWait: f.maxWait,
	}, nil
}

func (f *mcpServiceFlags) token() (string, error) {
	fromEnv, err := secret.FromEnv("CORRAL_TOKEN")
	if err != nil {
		return "", fmt.Errorf("CORRAL_TOKEN: %w: pass the token with --service-token-file instead", err)
	}
	if f.tokenFile != "" {
		t, err := secret.FromFile(f.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--service-token-file: %w", err)
		}
		return t, nil
	}
	if t := strings.TrimSpace(fromEnv); t != "" {
		return t, nil
	}
	if f.data == "" {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(f.data, "token"))
	if err != nil {
		return "", nil // a service run with --insecure-no-auth needs none
	}
	return strings.TrimSpace(string(b)), nil
}
