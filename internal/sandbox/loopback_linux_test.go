package sandbox_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/egress"
	"github.com/corralrun/corral/internal/sandbox"
	"github.com/corralrun/corral/internal/sandbox/sandboxtest"
	"github.com/corralrun/corral/internal/testutil"
)

// loopbackPython is the Python client of the loopback test: urllib, a raw
// socket, a streamed (SSE) response, a bare connect.
const loopbackPython = `import socket, sys, urllib.request
mode = sys.argv[1]
if mode == "urllib":
    print(urllib.request.urlopen(sys.argv[2], timeout=20).read().decode())
elif mode == "raw":
    s = socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=20)
    s.sendall(b"GET /hello HTTP/1.0\r\nHost: x\r\n\r\n")
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    print(data.split(b"\r\n\r\n", 1)[1].decode())
elif mode == "sse":
    # The second event is sent only once the first has arrived and been
    # acknowledged: a relay that held bytes back would hang here.
    r = urllib.request.urlopen(sys.argv[2] + "/sse", timeout=20)
    first = r.readline().decode().strip()
    urllib.request.urlopen(sys.argv[2] + "/ack", timeout=20).read()
    rest = r.read().decode().split()
    print("stream:", first, " ".join(rest))
elif mode == "connect":
    socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=5).close()
    print("connected")
`

// loopbackNode is the Node client: fetch, http.get, a bare connect.
const loopbackNode = `const [mode, a, b] = process.argv.slice(2);
const fail = (e) => { console.error(String(e)); process.exit(1); };
if (mode === "fetch") {
  fetch(a).then((r) => r.text()).then((t) => console.log(t), fail);
} else if (mode === "http") {
  require("http").get(a, (r) => { let s = ""; r.on("data", (d) => (s += d)); r.on("end", () => console.log(s)); }).on("error", fail);
} else if (mode === "connect") {
  const c = require("net").connect(Number(b), a);
  c.setTimeout(5000, () => fail("timeout"));
  c.on("connect", () => { console.log("connected"); c.destroy(); }).on("error", fail);
}
`

// gateway is a host service on the loopback, as a local model gateway
// would be: a plain answer and a streamed one.
func gateway(t *testing.T, l net.Listener, name string) string {
	t.Helper()
	acked := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hello":
			io.WriteString(w, "hello from "+name)
		case "/ack":
			acked <- struct{}{}
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data:one\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-acked:
				io.WriteString(w, "data:two\n\n")
			case <-time.After(30 * time.Second):
				io.WriteString(w, "data:never-acknowledged\n\n")
			case <-r.Context().Done():
			}
		}
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return l.Addr().String()
}

func listenOn(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// hostHasIPv6Loopback reports whether ::1 can be listened on here (and so
// in a new network namespace).
func hostHasIPv6Loopback() bool {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// TestHostLoopbackPortIsReachableAndNothingElse: --allow-host
// localhost:PORT, 127.0.0.1:PORT and [::1]:PORT make those host ports
// reachable inside the sandbox at the same address, by curl, Python
// (urllib, a raw socket, a streamed response) and Node (fetch, http), as
// root and as nobody; another port of the host's loopback stays out of
// reach.
func TestHostLoopbackPortIsReachableAndNothingElse(t *testing.T) {
	needSandbox(t)
	for _, tool := range []string{"curl", "python3", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP: %s is not installed", tool)
		}
	}
	forEachUser(t, func(t *testing.T) {
		f := newFixture(t)
		v6 := hostHasIPv6Loopback()
		// The gateway listens on 127.0.0.1 only: a client inside that
		// picks ::1 for localhost must reach it all the same.
		gw := gateway(t, listenOn(t, "127.0.0.1:0"), "the gateway")
		gwPort := gw[strings.LastIndexByte(gw, ':')+1:]
		second := gateway(t, listenOn(t, "127.0.0.1:0"), "the second service")
		var otherN atomic.Int32
		other := testutil.ListenCounting(t, "tcp", "127.0.0.1:0", &otherN)
		allow := []string{"localhost:" + gwPort, second}
		var third string
		if v6 {
			third = gateway(t, listenOn(t, "[::1]:0"), "the v6 service")
			allow = append(allow, third)
		}
		pol, err := sandbox.NewPolicy(corral.Sandbox{Mode: corral.SandboxWorkspace, AllowHosts: allow}, f.ws)
		if err != nil {
			t.Fatal(err)
		}
		f.policy.Loopback = pol.Loopback
		for name, body := range map[string]string{"client.py": loopbackPython, "client.js": loopbackNode} {
			if err := os.WriteFile(filepath.Join(f.ws, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}

		py, js := "python3 "+f.ws+"/client.py", "node "+f.ws+"/client.js"
		_, secondPort, _ := net.SplitHostPort(second)
		otherHost, otherPort, _ := net.SplitHostPort(other)
		checks := []string{
			"reach curl-localhost 'hello from the gateway' curl -sS --max-time 20 http://localhost:" + gwPort + "/hello",
			"reach curl-127 'hello from the gateway' curl -sS --max-time 20 http://127.0.0.1:" + gwPort + "/hello",
			"reach curl-ip-entry 'hello from the second service' curl -sS --max-time 20 http://" + second + "/hello",
			"reach python-urllib 'hello from the gateway' " + py + " urllib http://localhost:" + gwPort + "/hello",
			"reach python-raw 'hello from the gateway' " + py + " raw 127.0.0.1 " + gwPort,
			"reach python-sse 'stream: data:one data:two' " + py + " sse http://localhost:" + gwPort,
			"reach node-fetch 'hello from the gateway' " + js + " fetch http://localhost:" + gwPort + "/hello",
			"reach node-http 'hello from the second service' " + js + " http http://" + second + "/hello",
			"refused curl-other curl -sS --max-time 5 http://" + other + "/",
			"refused python-other " + py + " connect " + otherHost + " " + otherPort,
			"refused node-other " + js + " connect " + otherHost + " " + otherPort,
		}
		if v6 {
			_, thirdPort, _ := net.SplitHostPort(third)
			checks = append(checks,
				"reach python-raw-v6-fallback 'hello from the gateway' "+py+" raw ::1 "+gwPort,
				"reach curl-v6-entry 'hello from the v6 service' curl -sS --max-time 20 http://"+third+"/hello",
				"reach node-v6-entry 'hello from the v6 service' "+js+" http http://"+third+"/hello",
				"refused python-ip-entry-other-family "+py+" connect ::1 "+secondPort,
				"refused python-v6-entry-on-v4 "+py+" connect 127.0.0.1 "+thirdPort)
		}
		script := `reach() { name=$1 want=$2; shift 2; out=$("$@" 2>&1); if [ $? -eq 0 ] && [[ $out == *"$want"* ]]; then echo "ok $name"; else echo "FAIL $name: $out"; fi; }
refused() { name=$1; shift; out=$("$@" 2>&1); if [ $? -ne 0 ]; then echo "ok $name refused"; else echo "FAIL $name reached: $out"; fi; }
` + strings.Join(checks, "\n")
		out := runForwarded(t, f, []string{"/bin/bash", "-c", script})
		t.Logf("inside the sandbox:\n%s", out)
		if strings.Contains(out, "FAIL") || strings.Count(out, "ok ") != len(checks) {
			t.Fatalf("%d checks, %d held:\n%s", len(checks), strings.Count(out, "ok "), out)
		}
		if n := otherN.Load(); n != 0 {
			t.Fatalf("the host loopback port that was not allowed accepted %d connections", n)
		}
	})
}

// runForwarded runs args in f's sandbox with its loopback ports relayed by
// an egress.Forward, as corral relays them, and returns the output.
func runForwarded(t *testing.T, f *fixture, args []string) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "corral-private-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	f.policy.TmpDir = tmp
	// One writer for both streams: os/exec then writes it from one
	// goroutine at a time.
	w := &bytes.Buffer{}
	run, err := sandboxtest.Start(sandboxtest.Config{Policy: f.policy, Args: args, Env: f.env}, w, w)
	if err != nil {
		t.Fatal(err)
	}
	fwd := egress.NewForward()
	served := make(chan error, len(run.Loopback()))
	for _, l := range run.Loopback() {
		at := l.Addr().(*net.TCPAddr).AddrPort()
		targets := f.policy.LoopbackTargets(at)
		if targets == nil {
			t.Errorf("a listener at %s that the policy did not ask for", at)
		}
		go func() { served <- fwd.Serve(l, targets) }()
	}
	code, err := run.Wait()
	fwd.Close()
	for range run.Loopback() {
		if err := <-served; err != nil {
			t.Errorf("forward: %v", err)
		}
	}
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, w.String())
	}
	return w.String()
}

func TestLoopbackEntriesBecomePorts(t *testing.T) {
	ws := t.TempDir()
	p, err := sandbox.NewPolicy(corral.Sandbox{Mode: corral.SandboxReadOnly, AllowHosts: []string{
		"api.example.com", "localhost:8080", "127.0.0.1:8080", "127.0.0.2:9000", "[::1]:7000", "[::ffff:127.0.0.1]:7001", "LOCALHOST:8080",
	}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	want := []sandbox.LoopbackPort{{Port: 8080, Localhost: true}, {Port: 9000, IP: "127.0.0.2"}, {Port: 7000, IP: "::1"}, {Port: 7001, IP: "127.0.0.1"}}
	if fmt.Sprint(p.Loopback) != fmt.Sprint(want) {
		t.Fatalf("Loopback %+v, want %+v", p.Loopback, want)
	}
	for at, targets := range map[string]string{
		"127.0.0.1:8080": "127.0.0.1:8080 [::1]:8080",
		"[::1]:8080":     "[::1]:8080 127.0.0.1:8080",
		"127.0.0.2:9000": "127.0.0.2:9000",
		"[::1]:7000":     "[::1]:7000",
		"127.0.0.1:7000": "",
		"127.0.0.1:9000": "",
	} {
		if got := strings.Join(p.LoopbackTargets(netip.MustParseAddrPort(at)), " "); got != targets {
			t.Errorf("targets of %s: %q, want %q", at, got, targets)
		}
	}
	for _, bad := range [][]string{{"localhost"}, {"127.0.0.1"}, {"[::1]"}, {"::1"}} {
		if _, err := sandbox.NewPolicy(corral.Sandbox{Mode: corral.SandboxReadOnly, AllowHosts: bad}, ws); err == nil || !strings.Contains(err.Error(), "name its port") {
			t.Errorf("%q without a port: %v, want a refusal", bad, err)
		}
	}
	p.TmpDir, p.ProxyPort = t.TempDir(), 8080
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "egress proxy") {
		t.Errorf("the proxy on a forwarded port: %v, want a refusal", err)
	}
	many := corral.Sandbox{Mode: corral.SandboxReadOnly}
	for i := range sandbox.MaxLoopbackPorts + 1 {
		many.AllowHosts = append(many.AllowHosts, "localhost:"+strconv.Itoa(8000+i))
	}
	p, err = sandbox.NewPolicy(many, ws)
	if err == nil {
		p.TmpDir = t.TempDir()
		err = p.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d loopback ports: %v, want a refusal", len(many.AllowHosts), err)
	}
}
