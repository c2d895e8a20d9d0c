package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
)

// needNobody skips loudly unless the tests run as root on a machine with
// the user nobody, and returns it.
func needNobody(t *testing.T) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		msg := "SKIP: running the service's tasks as another user needs root; run the tests as root (CI does)"
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("SKIP: needs the user nobody")
	}
	return u
}

// openDir returns a new directory whose every ancestor the test made
// traversable by others, so that only the modes corral itself sets keep
// other users out of what it creates inside.
func openDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return dir
}

const serviceToken = "svc-token-5e2f9a0c7b1d4e83a6"

// TestTaskCannotReachTheServicesSecrets is the review's H2 repro: a task
// of a service started as root with --run-as nobody prints its
// environment, the service's environment, the data directory and the
// token, and reverses $CORRAL_TOKEN; none of it shows a secret of the
// service. A headless agent's command gets the same environment.
func TestTaskCannotReachTheServicesSecrets(t *testing.T) {
	nobody := needNobody(t)
	tag := testutil.Tag(t)
	data := filepath.Join(openDir(t), "data")
	if err := os.Mkdir(data, 0o755); err != nil { // corral must close it
		t.Fatal(err)
	}
	srv := servetest.Start(t, corralBin, servetest.Options{Data: data, Tag: tag,
		Env:  []string{"CORRAL_TOKEN=" + serviceToken, "SERVICE_SECRET=the-services-own-secret", "LANG=C.UTF-8"},
		Args: []string{"--run-as", "nobody", "--pass-env", "LANG"}})
	c := client.New(srv.Addr, serviceToken)
	createAgent(t, c, &client.Agent{Name: "probe", Env: map[string]string{"AGENT_VAR": "for-the-task"}})
	probe := fmt.Sprintf(`id -u; env; echo ---; cat /proc/$PPID/environ; echo; echo ---; ls -l %[1]s; cat %[1]s/token; head -c 64 %[1]s/corral.db; echo "$CORRAL_TOKEN" | rev; tr '\0' ' ' < /proc/$PPID/cmdline; echo; echo end`, data)
	e, err := c.Submit(bg, "probe", probe, 0)
	if err != nil {
		t.Fatal(err)
	}
	e = waitTerminal(t, c, e.ID, time.Minute)
	out := e.Stdout + e.Stderr
	if !strings.HasPrefix(e.Stdout, nobody.Uid+"\n") || e.User != "nobody" || !strings.Contains(out, "end") {
		t.Fatalf("the task did not run as nobody to its end (user %q):\n%s", e.User, out)
	}
	for _, leak := range []string{serviceToken, reverse(serviceToken), "the-services-own-secret", "SERVICE_SECRET", "CORRAL_TOKEN="} {
		if strings.Contains(out, leak) {
			t.Errorf("the task saw %q:\n%s", leak, out)
		}
	}
	for _, want := range []string{"AGENT_VAR=for-the-task", "LANG=C.UTF-8", "USER=nobody", "/proc/", "Permission denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("the probe's output lacks %q:\n%s", want, out)
		}
	}
	// The same rules for a headless agent: what it runs reports on stderr.
	report := `env >&2; cat /proc/$PPID/environ >&2; cat ` + data + `/token >&2; echo '{"type":"result","subtype":"success","result":"done","session_id":"s"}'`
	createAgent(t, c, &client.Agent{Name: "agent", Kind: corral.KindHeadless, Command: []string{"sh", "-c", report, "agent"}, Env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-agents-own-key"}})
	h, err := c.Submit(bg, "agent", "hello", 0)
	if err != nil {
		t.Fatal(err)
	}
	h = waitTerminal(t, c, h.ID, time.Minute)
	if h.Status != corral.StatusSucceeded || !strings.Contains(h.Stderr, "USER=nobody") {
		t.Fatalf("headless probe: %s %s\n%s", h.Status, h.Error, h.Stderr)
	}
	if strings.Contains(h.Stderr, serviceToken) || strings.Contains(h.Stderr, "the-services-own-secret") || !strings.Contains(h.Stderr, "Permission denied") {
		t.Fatalf("the headless agent saw the service's secrets:\n%s", h.Stderr)
	}
	srv.Stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

// TestAnUnprivilegedServiceHidesItsEnvironmentFromItsTasks: without
// --run-as, tasks share the service's user. They can read its data
// directory (the documented cost), but not its environment: the service
// is not dumpable.
func TestAnUnprivilegedServiceHidesItsEnvironmentFromItsTasks(t *testing.T) {
	nobody := needNobody(t)
	tag := testutil.Tag(t)
	dir := openDir(t)
	bin := copyCorral(t, dir)
	data := filepath.Join(dir, "data")
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	os.Mkdir(data, 0o700)
	os.Chown(data, uid, gid)
	srv := servetest.Start(t, bin, servetest.Options{Data: data, Tag: tag, Env: []string{"CORRAL_TOKEN=" + serviceToken, "HOME=/"},
		User: &servetest.User{UID: uint32(uid), GID: uint32(gid)}})
	c := client.New(srv.Addr, serviceToken)
	createAgent(t, c, &client.Agent{Name: "probe"})
	e, err := c.Submit(bg, "probe", "id -u; cat /proc/$PPID/environ; echo; echo end", 0)
	if err != nil {
		t.Fatal(err)
	}
	e = waitTerminal(t, c, e.ID, time.Minute)
	out := e.Stdout + e.Stderr
	if !strings.HasPrefix(e.Stdout, nobody.Uid+"\n") || strings.Contains(out, serviceToken) || !strings.Contains(out, "Permission denied") {
		t.Fatalf("a task of the same user read the service's environment:\n%s", out)
	}
	srv.Stop()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// webLogin logs a cookie-keeping client in to the service at base and
// returns the session cookie's value and the page's CSRF token.
func webLogin(t *testing.T, hc *http.Client, base, token string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"token": {token}, "next": {"/"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == "corral_session" {
			cookie = c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == "" {
		t.Fatalf("login: %d, cookie %q", resp.StatusCode, cookie)
	}
	page, err := hc.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the agents page:\n%s", body)
	}
	return cookie, string(m[1])
}

// pageWith GETs / with only the given session cookie and returns the
// status.
func pageWith(t *testing.T, hc *http.Client, base, cookie string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.AddCookie(&http.Cookie{Name: "corral_session", Value: cookie})
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLogoutSurvivesARestart is the review's M5 repro: the cookie of a
// logged-out session stays dead after the service restarts.
func TestLogoutSurvivesARestart(t *testing.T) {
	tag := testutil.Tag(t)
	data := t.TempDir()
	srv := startServe(t, data, tag)
	base := "http://" + srv.addr
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	cookie, csrf := webLogin(t, hc, base, srv.token)
	kept, _ := webLogin(t, &http.Client{Jar: must(cookiejar.New(nil)), CheckRedirect: hc.CheckRedirect}, base, srv.token)
	req, _ := http.NewRequest("POST", base+"/logout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %v %v", resp, err)
	}
	resp.Body.Close()
	srv.stop()
	srv = startServe(t, data, tag)
	base = "http://" + srv.addr
	if code := pageWith(t, hc, base, cookie); code != http.StatusUnauthorized {
		t.Fatalf("the logged-out cookie works after a restart: %d", code)
	}
	if code := pageWith(t, hc, base, kept); code != http.StatusOK {
		t.Fatalf("a session that was not logged out ended with the restart: %d", code)
	}
	srv.stop()
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestServeOverTLSAndRefusesPlainHTTPOffLoopback: a non-loopback address
// needs TLS or an explicit --insecure-plain-http; over TLS the session
// cookie is Secure.
func TestServeOverTLSAndRefusesPlainHTTPOffLoopback(t *testing.T) {
	tag := testutil.Tag(t)
	s := &served{t: t, tag: tag}
	_, stderr, code := s.cli("serve", "--addr", "0.0.0.0:0", "--data", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "refusing to serve 0.0.0.0:0 over plain HTTP") {
		t.Fatalf("plain HTTP off loopback: exit %d %q", code, stderr)
	}
	_, stderr, code = s.cli("serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--tls-cert", "x.pem")
	if code == 0 || !strings.Contains(stderr, "go together") {
		t.Fatalf("a certificate without its key: exit %d %q", code, stderr)
	}
	plain := startServe(t, t.TempDir(), tag, "--addr", "0.0.0.0:0", "--insecure-plain-http")
	plain.stop()

	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	srv := servetest.Start(t, corralBin, servetest.Options{Data: filepath.Join(dir, "data"), Tag: tag,
		Args: []string{"--addr", "0.0.0.0:0", "--tls-cert", certFile, "--tls-key", keyFile}})
	if !strings.Contains(srv.Log(), "listening on https://") {
		t.Fatalf("not serving HTTPS:\n%s", srv.Log())
	}
	_, port, _ := net.SplitHostPort(srv.Addr)
	base := "https://127.0.0.1:" + port
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"token": {srv.Token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sc := resp.Header.Get("Set-Cookie"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(sc, "; Secure") {
		t.Fatalf("login over TLS: %d, cookie %q", resp.StatusCode, sc)
	}
	srv.Stop()
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corral test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestAgentsCommandSetsWhoRunsItsTasksAndWhatTheySee: the agents command
// sets run_as, pass_env and the sandbox, shows env names but never their
// values, and replaces or removes one variable at a time.
func TestAgentsCommandSetsWhoRunsItsTasksAndWhatTheySee(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	run := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := s.cli(args...)
		if code != want {
			t.Fatalf("corral %v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out + errOut
	}
	run(0, "agents", "create", "boxed", "--kind", "shell", "--run-as", "nobody", "--pass-env", "LANG", "--pass-env", "TZ",
		"--env", "API_KEY=sk-not-to-be-shown", "--env", "MODE=x", "--sandbox", "workspace", "--writable", "/srv/cache", "--allow-host", "api.example.com:443")
	out := run(0, "agents", "get", "boxed")
	var a client.Agent
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "sk-not-to-be-shown") || strings.Join(a.EnvNames, ",") != "API_KEY,MODE" || a.RunAs != "nobody" ||
		strings.Join(a.PassEnv, ",") != "LANG,TZ" || a.Sandbox.Mode != corral.SandboxWorkspace || a.Sandbox.Writable[0] != "/srv/cache" {
		t.Fatalf("agent as created:\n%s", out)
	}
	if out := run(0, "agents"); !strings.Contains(out, "nobody") || !strings.Contains(out, "workspace") {
		t.Fatalf("agents list lacks run-as and sandbox:\n%s", out)
	}
	run(0, "agents", "update", "boxed", "--env", "API_KEY=sk-rotated", "--unset-env", "MODE", "--sandbox", "off")
	a2, err := s.c.Agent(bg, "boxed")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a2.EnvNames, ",") != "API_KEY" || a2.Sandbox.Enabled() || a2.RunAs != "nobody" {
		t.Fatalf("after update: %+v", a2)
	}
	if out := run(1, "agents", "create", "bad", "--kind", "headless", "--", "claude", "-p", "{{prompt}}"); !strings.Contains(out, `put "--" before it`) {
		t.Fatalf("an option-position prompt was accepted:\n%s", out)
	}
	if out := run(1, "agents", "create", "leak", "--kind", "shell", "--pass-env", "CORRAL_TOKEN"); !strings.Contains(out, "never passed to tasks") {
		t.Fatalf("pass-env CORRAL_TOKEN was accepted:\n%s", out)
	}
	s.stop()
}
