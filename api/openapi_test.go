package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/sqlite"
)

// TestOpenAPIDocumentMatchesTheServer holds docs/openapi.yaml to the
// server: every route the api package registers is documented and every
// documented route is registered; then a real service, running real
// tasks, is asked every documented operation, and every answer must be
// documented (its status, and its body: no undocumented field, no
// required field missing, each value of its type), every documented
// operation must have been asked, every field of every answer's schema
// must have come back in some answer, and every field of a request
// schema must have been sent and accepted.
func TestOpenAPIDocumentMatchesTheServer(t *testing.T) {
	d := loadDoc(t)
	routes := registeredRoutes(t)
	if len(routes) < 10 {
		t.Fatalf("read only %d routes from the api package's HandleFunc calls: the test no longer finds how routes are registered", len(routes))
	}
	for _, r := range routes {
		if d.ops[r] == nil {
			t.Errorf("the server registers %q, which docs/openapi.yaml does not document", r)
		}
	}
	for key := range d.ops {
		if !slices.Contains(routes, key) {
			t.Errorf("docs/openapi.yaml documents %q, which the server does not register", key)
		}
	}
	exempt := probeEveryOperation(t, d)
	for id, key := range d.opIDs {
		if !d.hit[key] {
			t.Errorf("operation %s (%s) was never asked: the probe must cover it", id, key)
		}
	}
	resp, req := d.bodySchemas()
	for _, f := range d.unseenIn(d.seenResp, resp, exempt) {
		t.Errorf("documented field %s was in no answer: the server does not return it, or the probe never made it (mark it x-unprobed with the reason if only a crash or a full disk makes it)", f)
	}
	for _, f := range d.unseenIn(d.seenReq, req, nil) {
		t.Errorf("documented request field %s was never sent: the probe must show the server accepts it", f)
	}
}

// probe asks a server the documented operations and checks each answer
// against the document.
type probe struct {
	t     *testing.T
	d     *apiDoc
	base  string
	hc    *http.Client
	token string
}

// call sends method path (with query) and body (JSON-encoded unless it
// is a []byte), with the token unless noAuth, and checks the request
// body and the answer against the document. It returns the status and
// the decoded JSON body (or, for an event stream, the events in order as
// {"event": name, "id": id, "data": decoded}).
func (p *probe) call(method, path string, body any, hdr map[string]string) (int, any) {
	p.t.Helper()
	u, _ := url.Parse(path)
	key, ok := p.d.matchPath(method, u.Path)
	if !ok {
		p.t.Fatalf("%s %s: no documented operation", method, path)
	}
	p.d.hit[key] = true
	op := p.d.ops[key]
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
		var generic any
		json.Unmarshal(raw, &generic)
		p.checkRequest(op, key, generic)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if method != "GET" {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	code := strconv.Itoa(resp.StatusCode)
	r, ok := op["responses"].(map[string]any)[code].(map[string]any)
	if !ok {
		p.t.Errorf("%s %s answered %s, which the document does not list for %s: %s", method, path, code, key, short(string(raw)))
		return resp.StatusCode, nil
	}
	r, _ = p.d.deref(r, "")
	content, _ := r["content"].(map[string]any)
	if len(content) == 0 {
		if len(raw) != 0 {
			p.t.Errorf("%s %s: %s documents no body, got %s", method, path, code, short(string(raw)))
		}
		return resp.StatusCode, nil
	}
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	media, ok := content[ct].(map[string]any)
	if !ok {
		p.t.Errorf("%s %s: Content-Type %q is not documented for %s", method, path, ct, code)
		return resp.StatusCode, nil
	}
	switch ct {
	case "application/json":
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			p.t.Errorf("%s %s: body is not JSON: %v", method, path, err)
		}
		p.check(media["schema"].(map[string]any), v, method+" "+path)
		return resp.StatusCode, v
	case "text/event-stream":
		return resp.StatusCode, p.checkEvents(media, raw, method+" "+path)
	}
	return resp.StatusCode, string(raw)
}

func (p *probe) check(s map[string]any, v any, at string) {
	p.t.Helper()
	p.d.cur = p.d.seenResp
	for _, e := range p.d.validate(s, "", v, at) {
		p.t.Error(e)
	}
}

func (p *probe) checkRequest(op map[string]any, key string, v any) {
	p.t.Helper()
	rb, ok := op["requestBody"].(map[string]any)
	if !ok {
		p.t.Errorf("%s: the probe sends a body, the document takes none", key)
		return
	}
	s := rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	p.d.cur = p.d.seenReq
	for _, e := range p.d.validate(s, "", v, "request of "+key) {
		p.t.Error(e)
	}
}

// checkEvents parses a Server-Sent Events body and checks each event's
// data against the schema the document gives its name.
func (p *probe) checkEvents(media map[string]any, raw []byte, at string) []map[string]any {
	p.t.Helper()
	kinds, _ := media["x-sse-events"].(map[string]any)
	var out []map[string]any
	ev := map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name, ok := ev["event"].(string); ok {
				s, known := kinds[name].(map[string]any)
				if !known {
					p.t.Errorf("%s: event %q is not in x-sse-events", at, name)
				} else {
					var v any
					if err := json.Unmarshal([]byte(ev["raw"].(string)), &v); err != nil {
						p.t.Errorf("%s: event %s: data is not JSON: %v", at, name, err)
					}
					p.check(s, v, at+" event "+name)
					ev["data"] = v
				}
				out = append(out, ev)
			}
			ev = map[string]any{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			ev["event"] = line[len("event: "):]
		case strings.HasPrefix(line, "id: "):
			ev["id"] = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			prev, _ := ev["raw"].(string)
			ev["raw"] = prev + line[len("data: "):]
		default:
			p.t.Errorf("%s: unexpected event-stream line %q", at, line)
		}
	}
	return out
}

// obj returns v as a JSON object, failing the test otherwise.
func (p *probe) obj(v any, what string) map[string]any {
	p.t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		p.t.Fatalf("%s: not a JSON object: %s", what, short(v))
	}
	return m
}

// want fails the test unless got is want.
func (p *probe) want(got, want int, what string, v any) {
	p.t.Helper()
	if got != want {
		p.t.Fatalf("%s: answered %d, want %d: %s", what, got, want, short(v))
	}
}

// finish follows id's events to their end and returns the execution.
func (p *probe) finish(id string) map[string]any {
	p.t.Helper()
	code, v := p.call("GET", "/v1/executions/"+id+"/events", nil, nil)
	p.want(code, 200, "events of "+id, v)
	evs, _ := v.([]map[string]any)
	if len(evs) == 0 || evs[len(evs)-1]["event"] != "end" {
		p.t.Fatalf("events of %s did not end with end: %v", id, evs)
	}
	return p.obj(evs[len(evs)-1]["data"], "end of "+id)
}

func (p *probe) get(path string) map[string]any {
	p.t.Helper()
	code, v := p.call("GET", path, nil, nil)
	p.want(code, 200, "GET "+path, v)
	return p.obj(v, path)
}

func (p *probe) send(method, path string, body any, want int) map[string]any {
	p.t.Helper()
	code, v := p.call(method, path, body, nil)
	p.want(code, want, method+" "+path, v)
	m, _ := v.(map[string]any)
	return m
}

// probeEveryOperation runs a real service and asks it every operation of
// d in the ways that make every documented field appear. It returns the
// fields this machine cannot produce (a sandbox it cannot build), with
// the reason.
func probeEveryOperation(t *testing.T, d *apiDoc) map[string]string {
	dir := t.TempDir()
	tag := testutil.Tag(t)
	fakeagent := servetest.Build(t, dir, "fakeagent", "../internal/fakeagent")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := service.New(service.Config{Store: st, DataDir: filepath.Join(dir, "data"), Labels: []string{"probe"},
		Env: []string{testutil.TagEnvVar(tag)}, ShutdownTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	closed := false
	closeSvc := func() {
		if !closed {
			closed = true
			if err := svc.Close(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	defer closeSvc()
	srv, err := api.New(api.Config{Service: svc, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer hs.CloseClientConnections()
	p := &probe{t: t, d: d, base: hs.URL, hc: hs.Client(), token: token}
	exempt := map[string]string{}

	probeHealth(p)
	probeAgents(p, dir, fakeagent)
	probeExecutions(p, exempt)
	probeSchedules(p)
	switch on, why := svc.Guarded(); {
	case !on:
		t.Logf("SKIP: the task guard cannot be built here (%s): its report goes unprobed", why)
		for _, f := range []string{"mechanisms", "hidden", "capabilities"} {
			exempt["#/components/schemas/GuardReport/properties/"+f] = "no guard here"
		}
	case os.Geteuid() != 0:
		exempt["#/components/schemas/GuardReport/properties/capabilities"] = "a task that is not root keeps none"
	}

	// A closing service: not ready (and why), and no new work.
	closeSvc()
	if code, v := p.call("GET", "/readyz", nil, nil); code != 503 || p.obj(v, "readyz")["reason"] == nil {
		t.Errorf("readyz of a closed service: %d %v", code, v)
	}
	code, v := p.call("POST", "/v1/agents/sh/tasks", map[string]any{"input": "true"}, nil)
	p.want(code, 503, "a task for a closed service", v)
	testutil.AssertNoTagged(t, tag, 30*time.Second)
	return exempt
}

func probeHealth(p *probe) {
	code, v := p.call("GET", "/healthz", nil, map[string]string{"Authorization": ""})
	p.want(code, 200, "healthz", v)
	code, v = p.call("GET", "/readyz", nil, map[string]string{"Authorization": ""})
	p.want(code, 200, "readyz without token", v)
	if r := p.get("/readyz"); r["worker"] == nil {
		p.t.Errorf("readyz with the token names no worker: %v", r)
	}
	code, v = p.call("GET", "/readyz", nil, map[string]string{"Authorization": "Bearer wrong"})
	p.want(code, 401, "readyz with a wrong token", v)
	code, v = p.call("GET", "/metrics", nil, nil)
	p.want(code, 200, "metrics", v)
	code, v = p.call("GET", "/metrics", nil, map[string]string{"Authorization": ""})
	p.want(code, 401, "metrics without token", v)
	code, v = p.call("GET", "/v1/agents", nil, map[string]string{"Authorization": ""})
	p.want(code, 401, "agents without token", v)
}

func probeAgents(p *probe, dir, fakeagent string) {
	p.get("/v1/agents")
	work := filepath.Join(dir, "work")
	for _, d := range []string{work, filepath.Join(work, "out"), filepath.Join(work, "hidden")} {
		os.MkdirAll(d, 0o755)
	}
	me := strconv.Itoa(os.Getuid())
	p.send("POST", "/v1/agents", map[string]any{
		"name": "sh", "kind": "shell", "shell": "bash", "workdir": work, "env": map[string]any{"PROBE_SECRET": "s3cret-value"},
		"pass_env": []string{"LANG"}, "run_as": me, "labels": []string{"probe"}, "max_parallel_tasks": 4,
		"overflow": "queue", "max_backlog": 20, "timeout": "1m", "stall_timeout": 60, "idle_timeout": "1m",
		"grace": "1s", "max_output": 64,
	}, 201)
	p.send("POST", "/v1/agents", map[string]any{
		"name": "again", "kind": "shell", "labels": []string{"probe"}, "max_attempts": 2, "retry_on": []string{"exit"},
		"retry_backoff": "1h", "retry_max_backoff": "2h",
	}, 201)
	p.send("POST", "/v1/agents", map[string]any{"name": "bad-retry", "kind": "shell", "max_attempts": 2, "retry_on": []string{"auth"}}, 400)
	p.send("POST", "/v1/agents", map[string]any{
		"name": "thrifty", "kind": "headless", "labels": []string{"probe"}, "command": []string{fakeagent, "--", "{{prompt}}"},
		"max_cost_usd": 100, "max_tokens": 1000000000, "daily_cost_usd": 100, "daily_tokens": 1, "monthly_cost_usd": 1000,
		"monthly_tokens": 1000000000, "budget_time_zone": "Europe/Paris", "budget_overrun": "finish",
	}, 201)
	p.send("POST", "/v1/agents", map[string]any{"name": "bad-budget", "kind": "shell", "daily_cost_usd": -1}, 400)
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	p.t.Cleanup(hooks.Close)
	p.send("POST", "/v1/agents", map[string]any{"name": "hooked", "kind": "shell", "labels": []string{"probe"},
		"webhooks": []any{map[string]any{"url": hooks.URL + "/all", "secret": "whsec"}, map[string]any{"url": hooks.URL + "/ends", "secret": "whsec2", "events": []string{"succeeded", "failed"}}}}, 201)
	p.send("POST", "/v1/agents", map[string]any{"name": "bad-hook", "kind": "shell", "webhooks": []any{map[string]any{"url": "ftp://x", "secret": "s"}}}, 400)
	p.send("POST", "/v1/agents", map[string]any{
		"name": "box", "kind": "shell", "workdir": work, "labels": []string{"probe"},
		"sandbox": map[string]any{"mode": "workspace", "network": "host", "writable": []string{filepath.Join(work, "out")},
			"deny_read": []string{filepath.Join(work, "hidden")}},
		"env": map[string]any{"BOX": "1"}, "env_names": []string{"BOX"},
	}, 201)
	p.send("POST", "/v1/agents", map[string]any{
		"name": "ro", "kind": "shell", "labels": []string{"probe"},
		"sandbox": map[string]any{"mode": "read-only", "allow_hosts": []string{"example.com:443"}, "allow_unix_sockets": []string{filepath.Join(work, "sock")}},
	}, 201)
	p.send("POST", "/v1/agents", map[string]any{
		"name": "hl", "kind": "headless", "labels": []string{"probe"}, "command": []string{fakeagent, "--", "{{prompt}}"},
		"resume": true, "resume_prompt": "Go on.",
	}, 201)
	p.send("POST", "/v1/agents", map[string]any{"name": "one", "kind": "shell", "labels": []string{"probe"}, "max_parallel_tasks": 1}, 201)
	p.send("POST", "/v1/agents", map[string]any{"name": "sh", "kind": "shell"}, 409)
	p.send("POST", "/v1/agents", []byte(`{"name": "bad", "kind": "shell", "bogus": 1}`), 400)
	if len(p.get("/v1/agents")["agents"].([]any)) != 8 {
		p.t.Fatal("the listing does not hold the 8 agents")
	}
	hooked := p.get("/v1/agents/hooked")
	if fmt.Sprint(hooked["webhooks"]) == "" || strings.Contains(fmt.Sprint(hooked), "whsec") {
		p.t.Fatalf("an agent's webhooks show their secrets: %v", hooked)
	}
	p.send("PATCH", "/v1/agents/hooked", hooked, 200) // sent back without their secrets, which are kept
	p.send("GET", "/v1/agents/nobody", nil, 404)
	sh := p.get("/v1/agents/sh")
	if sh["env"] != nil || !slices.Equal(asList(sh["env_names"]), []string{"PROBE_SECRET"}) {
		p.t.Fatalf("the agent's env is not answered by its names: %v", sh)
	}
	// A patch may send the agent back whole, with env changes.
	sh["env"] = map[string]any{"PROBE_SECRET": nil, "PROBE_OTHER": "x"}
	p.send("PATCH", "/v1/agents/sh", sh, 200)
	hl := p.get("/v1/agents/hl")
	hl["max_parallel_tasks"] = 2
	p.send("PATCH", "/v1/agents/hl", hl, 200)
	again := p.get("/v1/agents/again")
	again["max_attempts"] = 3
	p.send("PATCH", "/v1/agents/again", again, 200)
	thrifty := p.get("/v1/agents/thrifty")
	thrifty["monthly_cost_usd"] = 2000
	p.send("PATCH", "/v1/agents/thrifty", thrifty, 200)
	box := p.get("/v1/agents/box")
	box["grace"] = 2
	p.send("PATCH", "/v1/agents/box", box, 200)
	p.send("PATCH", "/v1/agents/sh", map[string]any{"name": "renamed"}, 400)
	p.send("PATCH", "/v1/agents/nobody", map[string]any{"max_output": 1}, 404)
	p.send("DELETE", "/v1/agents/ro", nil, 204)
	p.send("DELETE", "/v1/agents/ro", nil, 404)
	// A body that is not JSON, and one too large.
	if code, v := p.call("POST", "/v1/agents", []byte(`{"name":"x","kind":"shell"}`), map[string]string{"Content-Type": "text/plain"}); code != 415 {
		p.t.Errorf("a text/plain agent: %d %v", code, v)
	}
	big := append([]byte(`{"name":"x","kind":"shell","workdir":"`), bytes.Repeat([]byte("x"), 2<<20)...)
	if code, v := p.call("POST", "/v1/agents", append(big, `"}`...), nil); code != 413 {
		p.t.Errorf("a 2 MiB agent: %d %v", code, v)
	}
}

func probeExecutions(p *probe, exempt map[string]string) {
	tasks := "/v1/agents/sh/tasks"
	trace := map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "probe=1"}
	code, v := p.call("POST", tasks, map[string]any{"input": "echo out; echo err >&2; head -c 200 /dev/zero | tr '\\0' x", "timeout": "30s"}, trace)
	p.want(code, 202, "a task", v)
	e := p.finish(p.obj(v, "task")["id"].(string))
	if got := p.get("/v1/executions/" + e["id"].(string)); got["output_truncated"] != true || got["stderr"] == nil {
		p.t.Errorf("a task printing 200 bytes past max_output 64: %v", got)
	}
	failed := p.finish(p.send("POST", tasks, map[string]any{"input": "exit 3"}, 202)["id"].(string))
	p.finish(p.send("POST", tasks, map[string]any{"input": "kill -KILL $$"}, 202)["id"].(string))
	p.finish(p.send("POST", tasks, map[string]any{"input": "sleep 300 & echo started"}, 202)["id"].(string))
	if hl := p.finish(p.send("POST", "/v1/agents/hl/tasks", map[string]any{"input": "success"}, 202)["id"].(string)); hl["result"] == nil {
		p.t.Errorf("the headless turn has no result: %v", hl)
	}
	if box := p.finish(p.send("POST", "/v1/agents/box/tasks", map[string]any{"input": "echo boxed"}, 202)["id"].(string)); box["sandbox"] == nil {
		p.t.Logf("SKIP: the sandboxed run could not be confined here (%v): its sandbox report goes unprobed", box["error"])
		for _, f := range []string{"mode", "network", "writable", "mechanisms", "landlock_abi"} {
			exempt["#/components/schemas/SandboxReport/properties/"+f] = "no sandbox here"
		}
	}
	p.send("POST", tasks, map[string]any{"input": ""}, 400)
	p.send("POST", tasks, []byte(`{"input": "true", "labels": ["x"]}`), 400)
	p.send("POST", "/v1/agents/nobody/tasks", map[string]any{"input": "true"}, 404)

	// A running task: its slot, a rejection at capacity, a replay that
	// does not wait, a refused delete, a cancel.
	run := p.send("POST", "/v1/agents/one/tasks", map[string]any{"input": "sleep 60"}, 202)
	id := run["id"].(string)
	testutil.WaitFor(p.t, 30*time.Second, "the task's start", func() bool {
		return p.get("/v1/executions/" + id)["started_at"] != nil
	})
	if sl := p.get("/v1/agents/one/slots"); len(sl["slots"].([]any)) != 1 {
		p.t.Fatalf("the running task holds no slot: %v", sl)
	}
	rej := p.send("POST", "/v1/agents/one/tasks", map[string]any{"input": "true"}, 429)
	if rej["execution"] == nil {
		p.t.Errorf("a rejection without its execution: %v", rej)
	}
	code, v = p.call("GET", "/v1/executions/"+id+"/events?follow=false", nil, nil)
	p.want(code, 200, "a replay", v)
	if evs := v.([]map[string]any); evs[len(evs)-1]["event"] != "replayed" {
		p.t.Errorf("a replay of a running task ends with %v", evs[len(evs)-1])
	}
	p.send("DELETE", "/v1/agents/one", nil, 409)
	if c := p.send("POST", "/v1/executions/"+id+"/cancel", nil, 202); c["cancel_requested"] != true {
		p.t.Errorf("the cancel of a running task: %v", c)
	}
	if end := p.finish(id); end["status"] != "cancelled" {
		p.t.Errorf("cancelled task ended %v", end["status"])
	}
	p.send("POST", "/v1/executions/"+id+"/cancel", nil, 409)
	p.send("POST", "/v1/executions/nobody/cancel", nil, 404)
	p.send("DELETE", "/v1/agents/one", nil, 204)

	// Webhooks: the run's events are delivered, and the deliveries shown.
	hid := p.finish(p.send("POST", "/v1/agents/hooked/tasks", map[string]any{"input": "true"}, 202)["id"].(string))["id"].(string)
	testutil.WaitFor(p.t, 30*time.Second, "the run's webhooks delivered", func() bool {
		ds := p.get("/v1/executions/" + hid + "/webhooks")["deliveries"].([]any)
		for _, d := range ds {
			if d.(map[string]any)["status"] != "delivered" {
				return false
			}
		}
		return len(ds) == 3
	})
	p.send("GET", "/v1/executions/nobody/webhooks", nil, 404)

	// A budget: a run spends the agent's daily tokens, and the next task
	// is refused until the window reopens.
	p.finish(p.send("POST", "/v1/agents/thrifty/tasks", map[string]any{"input": "success"}, 202)["id"].(string))
	if sp := p.get("/v1/agents/thrifty/spend"); len(sp["windows"].([]any)) != 2 {
		p.t.Fatalf("the agent's spend: %v", sp)
	}
	p.send("GET", "/v1/agents/nobody/spend", nil, 404)
	if code, v := p.call("POST", "/v1/agents/thrifty/tasks", map[string]any{"input": "success"}, nil); code != 429 || !strings.Contains(fmt.Sprint(v), "budget_spent") {
		p.t.Errorf("a task once the agent's daily tokens are spent: %d %v", code, v)
	}

	// A run its agent retries: the attempt after it waits for its time.
	first := p.finish(p.send("POST", "/v1/agents/again/tasks", map[string]any{"input": "exit 4"}, 202)["id"].(string))
	if first["retried_by"] == nil {
		p.t.Fatalf("a failed run of an agent that retries it: %v", first)
	}
	if w := p.get("/v1/executions/" + first["retried_by"].(string)); w["status"] != "waiting" || w["next_attempt_at"] == nil {
		p.t.Fatalf("its next attempt: %v", w)
	}
	if c := p.send("POST", "/v1/executions/"+first["id"].(string)+"/cancel", nil, 202); c["status"] != "cancelled" {
		p.t.Errorf("the cancel of a run through its first attempt: %v", c)
	}
	retry := p.send("POST", "/v1/executions/"+failed["id"].(string)+"/retry", nil, 202)
	p.finish(retry["id"].(string))
	p.send("POST", "/v1/executions/nobody/retry", nil, 404)

	// Listings, filtered and paged; events resumed.
	since := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	until := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	page := p.get("/v1/executions?agent=sh&status=succeeded,failed&since=" + since + "&until=" + until + "&limit=2")
	if page["next_cursor"] == "" {
		p.t.Fatalf("a page of 2 of at least 4 has no next cursor: %v", page)
	}
	p.get("/v1/executions?cursor=" + url.QueryEscape(page["next_cursor"].(string)))
	p.send("GET", "/v1/executions?limit=0", nil, 400)
	p.send("GET", "/v1/executions/nobody", nil, 404)
	id = e["id"].(string)
	code, v = p.call("GET", "/v1/executions/"+id+"/events?after=1", nil, nil)
	p.want(code, 200, "events after 1", v)
	if first := v.([]map[string]any)[1]; first["id"] != "2" {
		p.t.Errorf("events after 1 start with %v", first)
	}
	code, v = p.call("GET", "/v1/executions/"+id+"/events", nil, map[string]string{"Last-Event-ID": "1000000"})
	p.want(code, 200, "events past the end", v)
	p.send("GET", "/v1/executions/"+id+"/events?after=x", nil, 400)
	p.send("GET", "/v1/executions/nobody/events", nil, 404)
}

func probeSchedules(p *probe) {
	base := "/v1/agents/sh/schedules"
	sc := p.send("POST", base, map[string]any{"cron": "@hourly", "time_zone": "Europe/Paris", "input": "echo scheduled",
		"timeout": "10s", "enabled": false, "missed": "run_once"}, 201)
	id := sc["id"].(string)
	tick := p.send("POST", base, map[string]any{"cron": "* * * * * *", "input": "echo tick"}, 201)
	p.send("POST", base, map[string]any{"cron": "not cron", "input": "x"}, 400)
	p.send("POST", "/v1/agents/nobody/schedules", map[string]any{"cron": "@hourly", "input": "x"}, 404)
	var fired map[string]any
	testutil.WaitFor(p.t, 30*time.Second, "a fire of the every-second schedule", func() bool {
		fired = p.get(base + "/" + tick["id"].(string))
		return fired["last_execution_id"] != nil
	})
	fired["enabled"] = false
	p.send("PATCH", base+"/"+tick["id"].(string), fired, 200)
	if e := p.finish(fired["last_execution_id"].(string)); e["fire_at"] == nil || e["schedule_id"] == nil {
		p.t.Errorf("a fired execution without its fire: %v", e)
	}
	p.send("PATCH", base+"/"+id, map[string]any{"enabled": true, "cron": "@daily", "timeout": "20s"}, 200)
	p.send("PATCH", base+"/"+id, map[string]any{"id": "other"}, 400)
	trig := p.send("POST", base+"/"+id+"/trigger", nil, 202)
	p.finish(trig["id"].(string))
	page := p.get(base + "?limit=1")
	if page["next_cursor"] == "" {
		p.t.Fatalf("a page of 1 of 2 schedules has no next cursor: %v", page)
	}
	p.get(base + "?cursor=" + url.QueryEscape(page["next_cursor"].(string)))
	p.get("/v1/schedules?agent=sh&limit=1&cursor=" + url.QueryEscape(page["next_cursor"].(string)))
	p.send("GET", "/v1/schedules?limit=5000", nil, 400)
	p.send("GET", base+"?cursor=bogus", nil, 400)
	p.get(base + "/" + id)
	p.send("GET", "/v1/agents/hl/schedules/"+id, nil, 404)
	p.send("PATCH", base+"/nobody", map[string]any{"enabled": true}, 404)
	p.send("POST", base+"/nobody/trigger", nil, 404)
	p.send("DELETE", base+"/"+id, nil, 204)
	p.send("DELETE", base+"/"+id, nil, 404)
	p.send("GET", base+"/"+id, nil, 404)
	if got := fmt.Sprint(p.get("/v1/schedules")["schedules"]); strings.Contains(got, id) {
		p.t.Errorf("a deleted schedule is listed: %s", got)
	}
}
