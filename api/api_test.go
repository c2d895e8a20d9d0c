package api_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

const token = "test-token-0123456789"

// newAPI returns an API on a service that is not started: requests are
// answered and recorded, but no task ever runs, so fuzzed input cannot
// start a process.
func newAPI(t testing.TB, cfg api.Config) (*api.Server, *service.Service, string, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := service.New(service.Config{Store: st, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateAgent(ctx, &corral.Agent{Name: "fz", Kind: corral.KindShell, Shell: "true", MaxParallelTasks: 2, Overflow: corral.OverflowQueue}); err != nil {
		t.Fatal(err)
	}
	e, err := svc.Submit(ctx, service.Task{Agent: "fz", Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := svc.CreateSchedule(ctx, &corral.Schedule{Agent: "fz", Cron: "@hourly", Input: "x", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Service = svc
	if cfg.PublicHosts == nil {
		cfg.PublicHosts = []string{"example.com"} // the Host of httptest's requests
	}
	if cfg.Token == "" {
		cfg.Token = token
	}
	srv, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, svc, e.ID, sc.ID
}

func do(h http.Handler, method, path, body, auth string) *httptest.ResponseRecorder {
	// A followed event stream ends when its request does; anything else
	// gets the time a machine under load may need.
	wait := 30 * time.Second
	if strings.Contains(path, "/events") {
		wait = 200 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	if method != "GET" && method != "HEAD" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestUIAndSessionHooks(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ui:" + r.URL.Path)) })
	session := func(r *http.Request) bool {
		c, err := r.Cookie("session")
		return err == nil && c.Value == "good"
	}
	srv, _, _, _ := newAPI(t, api.Config{UI: ui, SessionAuth: session})
	if rec := do(srv, "GET", "/app/page", "", ""); rec.Code != 401 {
		t.Fatalf("UI without auth: %d", rec.Code)
	}
	req := httptest.NewRequest("GET", "/app/page", nil)
	req.AddCookie(&http.Cookie{Name: "session", Value: "good"})
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "ui:/app/page" {
		t.Fatalf("UI with session: %d %q", rec.Code, rec.Body)
	}
	req = httptest.NewRequest("GET", "/v1/agents", nil)
	req.AddCookie(&http.Cookie{Name: "session", Value: "good"})
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("API with session: %d", rec.Code)
	}
	if rec := do(srv, "GET", "/v1/agents", "", "Bearer "+token); rec.Code != 200 {
		t.Fatalf("API with token: %d", rec.Code)
	}
}

func TestResponsesHaveStableShapes(t *testing.T) {
	srv, _, id, scID := newAPI(t, api.Config{})
	auth := "Bearer " + token
	var agents api.AgentList
	rec := do(srv, "GET", "/v1/agents", "", auth)
	if err := json.Unmarshal(rec.Body.Bytes(), &agents); err != nil || len(agents.Agents) != 1 || agents.Agents[0].MaxBacklog != corral.DefaultMaxBacklog {
		t.Fatalf("agents: %v %s", err, rec.Body)
	}
	var list api.ExecutionList
	rec = do(srv, "GET", "/v1/executions?agent=fz&status=running,queued&limit=10", "", auth)
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Executions) != 1 || list.Executions[0].ID != id {
		t.Fatalf("executions: %v %s", err, rec.Body)
	}
	var slots api.SlotList
	rec = do(srv, "GET", "/v1/agents/fz/slots", "", auth)
	if err := json.Unmarshal(rec.Body.Bytes(), &slots); err != nil || slots.Capacity != 2 || slots.Used != 1 || slots.Slots[0].ExecutionID != id {
		t.Fatalf("slots: %v %s", err, rec.Body)
	}
	rec = do(srv, "PATCH", "/v1/agents/fz/schedules/"+scID, `{"enabled":false}`, auth)
	var sc corral.Schedule
	if err := json.Unmarshal(rec.Body.Bytes(), &sc); err != nil || sc.Enabled || sc.NextFireAt != nil || sc.Cron != "@hourly" {
		t.Fatalf("patch schedule: %v %s", err, rec.Body)
	}
	rec = do(srv, "POST", "/v1/agents/fz/tasks", `{"input":"echo","timeout":"5s"}`, auth)
	var e corral.Execution
	if rec.Code != 202 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Timeout.D() != 5*time.Second || rec.Header().Get("Location") != "/v1/executions/"+e.ID {
		t.Fatalf("submit: %d %s", rec.Code, rec.Body)
	}
	rec = do(srv, "GET", "/metrics", "", auth)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `corral_queue_depth{agent="fz"} 0`) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
}

var routes = []string{
	"POST /v1/agents", "PATCH /v1/agents/fz", "POST /v1/agents/fz/tasks", "POST /v1/agents/fz/schedules",
	"PATCH /v1/agents/fz/schedules/SCH", "POST /v1/executions/EXEC/cancel", "GET /v1/executions?QUERY",
	"GET /v1/executions/EXEC/events?QUERY", "POST /v1/agents/QUERY/tasks", "DELETE /v1/agents/QUERY",
}

// checkAnswer fails when an answer to any input is a server error or not
// the JSON it should be. (Mutations caught by the fuzz seeds: bad input
// answered 500 instead of 400, an error answered without a message.)
func checkAnswer(t testing.TB, rec *httptest.ResponseRecorder, method, path, body string) {
	if rec.Code >= 500 {
		t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
	}
	if rec.Code >= 400 {
		var e api.Error
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" {
			t.Fatalf("%s %s %q: error answer without a message: %d %s", method, path, body, rec.Code, rec.Body)
		}
	}
}

func fill(route, execID, scID, query string) (string, string) {
	method, path, _ := strings.Cut(route, " ")
	path = strings.NewReplacer("EXEC", execID, "SCH", scID).Replace(path)
	path = strings.Replace(path, "QUERY", query, 1)
	return method, path
}

func FuzzRequestBodies(f *testing.F) {
	seeds := []string{
		`{"name":"a","kind":"shell"}`, `{"name":"b","kind":"headless","command":["x","{{prompt}}"]}`,
		`{"input":"echo hi","timeout":"1s"}`, `{"input":"x","timeout":3.5}`, `{"cron":"*/5 * * * * *","input":"x","time_zone":"Asia/Tokyo"}`,
		`{"max_parallel_tasks":1e400}`, `{"env":{"":"x"}}`, `{"timeout":"-5m"}`, `[]`, `null`, `"str"`, `{"input":"\u0000"}`,
		`{"overflow":"queue","max_backlog":-1}`, `{"enabled":"yes"}`, `{"name":"` + strings.Repeat("n", 100) + `"}`, "\xff\xfe", `{`,
	}
	queries := []string{"", "status=queued", "limit=-1", "since=2026-01-01T00:00:00Z", "after=-3", "cursor=1_x", "fz%2F..", "follow=false"}
	for i, s := range seeds {
		f.Add(uint8(i), uint8(i), s)
	}
	srv, _, execID, scID := newAPI(f, api.Config{})
	f.Fuzz(func(t *testing.T, r, q uint8, body string) {
		method, path := fill(routes[int(r)%len(routes)], execID, scID, queries[int(q)%len(queries)])
		rec := do(srv, method, path, body, "Bearer "+token)
		checkAnswer(t, rec, method, path, body)
	})
}

// TestRandomBodiesNeverCauseServerErrors runs a fixed, seeded batch of
// mutated bodies on every route, so plain `go test` covers more than the
// fuzz seeds.
func TestRandomBodiesNeverCauseServerErrors(t *testing.T) {
	srv, _, execID, scID := newAPI(t, api.Config{})
	rng := rand.New(rand.NewPCG(5, 5))
	parts := []string{`{`, `}`, `"name"`, `"input"`, `"kind"`, `"shell"`, `"cron"`, `:`, `,`, `"x"`, `1`, `-1`, `null`, `[`, `]`, `"timeout"`, `"1s"`, `true`, `"\u00e9"`, "\xff", `"max_parallel_tasks"`, `"env"`, `"enabled"`, `"overflow"`, `"queue"`}
	queries := []string{"", "status=running", "limit=1001", "until=x", "after=5", "agent=fz", "follow=0", "a%00b"}
	for i := range 600 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		method, path := fill(routes[i%len(routes)], execID, scID, queries[rng.IntN(len(queries))])
		rec := do(srv, method, path, b.String(), "Bearer "+token)
		checkAnswer(t, rec, method, path, b.String())
	}
}

func TestReadyzAnswers503UntilTheWorkerCanTakeWork(t *testing.T) {
	srv, svc, _, _ := newAPI(t, api.Config{})
	// Not started: alive, not ready. Neither needs a token.
	if rec := do(srv, "GET", "/healthz", "", ""); rec.Code != 200 {
		t.Fatalf("healthz: %d", rec.Code)
	}
	rec := do(srv, "GET", "/readyz", "", "Bearer "+token)
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "not started") {
		t.Fatalf("readyz before start: %d %s", rec.Code, rec.Body)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := do(srv, "GET", "/readyz", "", ""); rec.Code != 200 {
		t.Fatalf("readyz after start: %d %s", rec.Code, rec.Body)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := do(srv, "GET", "/readyz", "", ""); rec.Code != 503 {
		t.Fatalf("readyz while closing: %d %s", rec.Code, rec.Body)
	}
}

// TestListingsArePagedSummaries lists executions as summaries and
// schedules a page at a time, and answers 409 limit past the store's
// bounds.
func TestListingsArePagedSummaries(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(dir, "corral.db"), Limits: store.Limits{MaxSchedulesPerAgent: 3}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := service.New(service.Config{Store: st, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Service: svc, Token: token, PublicHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	svc.CreateAgent(ctx, &corral.Agent{Name: "p", Kind: corral.KindShell, MaxParallelTasks: 1, Overflow: corral.OverflowQueue})
	long := strings.Repeat("x", 5000)
	for range 3 {
		if _, err := svc.Submit(ctx, service.Task{Agent: "p", Input: long}); err != nil {
			t.Fatal(err)
		}
	}
	auth := "Bearer " + token
	rec := do(srv, "GET", "/v1/executions?limit=2", "", auth)
	var page api.ExecutionList
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 || len(page.Executions) != 2 || page.NextCursor == "" {
		t.Fatalf("first page: %d %v %s", rec.Code, err, rec.Body.String()[:min(rec.Body.Len(), 300)])
	}
	if e := page.Executions[0]; !e.Summary || len(e.Input) != corral.SummaryChars {
		t.Fatalf("listed execution is not a summary: summary %v, input %d bytes", e.Summary, len(e.Input))
	}
	rec = do(srv, "GET", "/v1/executions?limit=2&cursor="+page.NextCursor, "", auth)
	json.Unmarshal(rec.Body.Bytes(), &page)
	if len(page.Executions) != 1 || page.NextCursor != "" {
		t.Fatalf("second page: %s", rec.Body.String()[:min(rec.Body.Len(), 300)])
	}
	if rec := do(srv, "GET", "/v1/executions?limit=1001", "", auth); rec.Code != 400 {
		t.Fatalf("limit 1001: %d", rec.Code)
	}
	for i := range 4 {
		rec := do(srv, "POST", "/v1/agents/p/schedules", `{"cron":"@hourly","input":"x"}`, auth)
		want := 201
		if i == 3 {
			want = 409
		}
		if rec.Code != want || want == 409 && !strings.Contains(rec.Body.String(), `"limit"`) {
			t.Fatalf("schedule %d: %d %s", i, rec.Code, rec.Body.String())
		}
	}
	var sl api.ScheduleList
	rec = do(srv, "GET", "/v1/schedules?limit=2", "", auth)
	if json.Unmarshal(rec.Body.Bytes(), &sl); len(sl.Schedules) != 2 || sl.NextCursor == "" {
		t.Fatalf("schedules page: %s", rec.Body.String())
	}
	rec = do(srv, "GET", "/v1/agents/p/schedules?cursor="+sl.NextCursor, "", auth)
	if json.Unmarshal(rec.Body.Bytes(), &sl); len(sl.Schedules) != 1 || sl.NextCursor != "" {
		t.Fatalf("schedules second page: %s", rec.Body.String())
	}
	if rec := do(srv, "GET", "/v1/schedules?cursor=bogus", "", auth); rec.Code != 400 {
		t.Fatalf("bad cursor: %d", rec.Code)
	}
	if rec := do(srv, "POST", "/v1/agents/p/schedules", `{"cron":"@every 0s","input":"x"}`, auth); rec.Code != 400 {
		t.Fatalf("@every 0s: %d", rec.Code)
	}
}
