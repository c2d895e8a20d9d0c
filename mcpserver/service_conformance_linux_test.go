package mcpserver

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
)

// TestConformanceTypeScriptSDKServiceTools drives the task service's
// tools with the official MCP TypeScript SDK client
// (testdata/conformance/service.mjs) against a real corral serve: over
// stdio through corral mcp --service (the token in CORRAL_TOKEN), and over
// streamable HTTP.
func TestConformanceTypeScriptSDKServiceTools(t *testing.T) {
	npm := testutil.NPMDir(t)
	s := startService(t)
	s.agent(corral.Agent{Name: "flaky", Retry: corral.Retry{MaxAttempts: 2, RetryOn: []corral.ErrorType{corral.ErrorExit}, RetryBackoff: corral.Duration(500 * time.Millisecond)}})
	s.agent(corral.Agent{Name: "sleeper", MaxParallelTasks: 4})
	hs := httptest.NewServer(s.srv.Handler(HTTPOptions{}))
	defer hs.Close()
	script, err := filepath.Abs("testdata/conformance/service.mjs")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, mode, url string }{
		{"stdio/tools", "tools", ""}, {"stdio/cancel", "cancel", ""},
		{"http/tools", "tools", hs.URL}, {"http/cancel", "cancel", hs.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{script, tc.mode}
			if tc.url != "" {
				args = append(args, tc.url)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", args...)
			cmd.Env = append(os.Environ(), "CORRAL_NPM_DIR="+npm, "CORRAL_BIN="+corralBin, "CORRAL_SERVICE="+s.api.BaseURL,
				"CORRAL_TOKEN="+s.api.Token, "FLAKY_TASK="+flakyTask(t), testutil.TagEnvVar(s.tag))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "ok "+tc.mode) {
				t.Fatalf("node service.mjs %s: %v\n%s", tc.mode, err, out)
			}
			t.Logf("%s", strings.TrimSpace(string(out)))
		})
	}
}
