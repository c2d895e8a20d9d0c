package corral

import (
	"encoding/json"
	"testing"
)

func TestSplitAllowedHost(t *testing.T) {
	for _, c := range []struct {
		in   string
		host string
		port int
		bad  bool
	}{
		{in: "api.anthropic.com", host: "api.anthropic.com"},
		{in: "API.Example.COM:443", host: "api.example.com", port: 443},
		{in: "*.example.com", host: "*.example.com"},
		{in: "[::1]:8080", host: "::1", port: 8080},
		{in: "::1", host: "::1"},
		{in: "127.0.0.1:0", bad: true},
		{in: "example.com:99999", bad: true},
		{in: "", bad: true},
		{in: "http://example.com", bad: true},
		{in: "*", bad: true},
	} {
		host, port, err := SplitAllowedHost(c.in)
		if (err != nil) != c.bad || (!c.bad && (host != c.host || port != c.port)) {
			t.Errorf("SplitAllowedHost(%q) = %q %d %v", c.in, host, port, err)
		}
	}
}

func TestSandboxJSONNamesTheZeroValues(t *testing.T) {
	b, err := json.Marshal(SandboxReport{Mode: SandboxReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"mode":"read-only","network":"none","writable":null,"mechanisms":null}` {
		t.Errorf("report %s", got)
	}
	var sb Sandbox
	if err := json.Unmarshal([]byte(`{"mode":"workspace","network":"none"}`), &sb); err != nil || sb.Mode != SandboxWorkspace || sb.Network != NetworkNone {
		t.Errorf("unmarshal: %+v %v", sb, err)
	}
	if err := json.Unmarshal([]byte(`{"mode":"everything"}`), &sb); err == nil {
		t.Error("a bad mode was accepted")
	}
	if b, _ := json.Marshal(Sandbox{}); string(b) != `{}` {
		t.Errorf("zero sandbox %s, want {}", b)
	}
}

func TestSandboxValidate(t *testing.T) {
	for _, c := range []struct {
		sb  Sandbox
		bad bool
	}{
		{sb: Sandbox{}},
		{sb: Sandbox{Mode: SandboxWorkspace, Writable: []string{"/data"}, AllowHosts: []string{"example.com:443"}}},
		{sb: Sandbox{Writable: []string{"/data"}}, bad: true},
		{sb: Sandbox{Mode: SandboxReadOnly, Writable: []string{"/data"}}, bad: true},
		{sb: Sandbox{Mode: SandboxWorkspace, Writable: []string{"relative"}}, bad: true},
		{sb: Sandbox{Mode: SandboxWorkspace, Network: NetworkHost, AllowHosts: []string{"example.com"}}, bad: true},
	} {
		if err := c.sb.Validate(); (err != nil) != c.bad {
			t.Errorf("Validate(%+v) = %v", c.sb, err)
		}
	}
}
