package proc_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

// TestSandboxReachesTheAllowedHostLoopbackPortOnly: with --allow-host
// localhost:PORT beside a remote host (so that HTTP_PROXY and NO_PROXY are
// set), the run reaches the host's service on that port at the same
// address, with curl, Python (urllib and a raw socket) and Node; another
// port of the host's loopback is reachable neither directly nor through
// the proxy, which refuses and reports it.
func TestSandboxReachesTheAllowedHostLoopbackPortOnly(t *testing.T) {
	needSandbox(t)
	for _, tool := range []string{"curl", "python3", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP: %s is not installed", tool)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from the host gateway")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var otherN atomic.Int32
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			otherN.Add(1)
			c.Close()
		}
	}()
	otherPort := other.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`reach() { name=$1; shift; out=$("$@" 2>&1); case $out in *"hello from the host gateway"*) echo "ok $name";; *) echo "FAIL $name: $out";; esac; }
refused() { name=$1; shift; if out=$("$@" 2>&1); then echo "FAIL $name reached: $out"; else echo "ok $name refused"; fi; }
reach curl curl -sS --max-time 20 http://localhost:%[1]d/
reach python-urllib python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())' http://localhost:%[1]d/
reach python-raw python3 -c 'import socket, sys; s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20); s.sendall(b"GET / HTTP/1.0\r\n\r\n"); print(b"".join(iter(lambda: s.recv(4096), b"")).decode())' %[1]d
reach node-fetch node -e 'fetch(process.argv[1]).then((r) => r.text()).then(console.log, (e) => { console.error(e); process.exit(1) })' http://localhost:%[1]d/
refused curl-other curl -sS --max-time 5 http://127.0.0.1:%[2]d/
refused python-other python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)' %[2]d
refused proxy-other curl -sS --fail --max-time 5 --noproxy '' -x "$HTTP_PROXY" http://localhost:%[2]d/
echo "proxy $HTTP_PROXY no_proxy $NO_PROXY"
`, port, otherPort)
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:    []string{"bash", "-c", script},
		Dir:     workspace(t),
		Sandbox: corral.Sandbox{Mode: corral.SandboxReadOnly, AllowHosts: []string{fmt.Sprintf("localhost:%d", port), "example.invalid:443"}},
		Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Stdout.Text() + res.Stderr.Text()
	t.Logf("%s:\n%s", res.Status(), out)
	if strings.Contains(out, "FAIL") || strings.Count(out, "ok ") != 7 || !strings.Contains(out, "proxy http://127.0.0.1:") {
		t.Fatalf("want 7 checks held, with the proxy's variables set:\n%s", out)
	}
	if n := otherN.Load(); n != 0 {
		t.Fatalf("the host loopback port that was not allowed accepted %d connections", n)
	}
	r := res.Sandbox
	if r == nil || !contains(r.Mechanisms, "loopback forward") || !contains(r.Mechanisms, "egress proxy") || !contains(r.DeniedHosts, fmt.Sprintf("localhost:%d", otherPort)) {
		t.Fatalf("report %+v", r)
	}
}
