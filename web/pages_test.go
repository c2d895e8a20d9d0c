package web_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
)

func TestEveryPageRendersOnAnEmptyService(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	b.login()
	for path, want := range map[string]string{
		"/":                   "No agents yet.",
		"/executions":         "No executions match.",
		"/schedules":          "No schedules yet.",
		"/tasks/new":          "There is no agent yet.",
		"/agents/new":         "Create agent",
		"/executions?range=x": "Unknown time range",
	} {
		if r := b.get(path); r.code != 200 || !strings.Contains(r.body, want) {
			t.Errorf("GET %s: %d, want %q in:\n%s", path, r.code, want, r.body)
		}
	}
	for _, path := range []string{"/agents/nobody", "/executions/nope", "/no/such/page"} {
		if r := b.get(path); r.code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.code)
		}
	}
}

func TestAgentFormNamesEveryInvalidFieldAndKeepsWhatWasTyped(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	csrf := b.login()
	r := b.post("/agents", url.Values{"csrf": {csrf}, "name": {"bad name"}, "kind": {"headless"}, "max_parallel_tasks": {"-1"},
		"timeout": {"soon"}, "env": {"NOEQUALS"}, "workdir": {"/srv/<x>"}})
	if r.code != http.StatusUnprocessableEntity {
		t.Fatalf("invalid agent: %d", r.code)
	}
	for _, want := range []string{
		`id="name-error"`, `id="command-error"`, `id="max_parallel_tasks-error"`, `id="timeout-error"`, `id="env-error"`,
		"Please fix the 5 fields", `value="/srv/&lt;x&gt;"`, `aria-invalid="true"`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the refused form lacks %s", want)
		}
	}
	r = b.post("/agents", url.Values{"csrf": {csrf}, "name": {"ok"}, "kind": {"shell"}, "max_parallel_tasks": {"2"}, "overflow": {"queue"}, "timeout": {"90s"}, "env": {"A=1\nB=x=y"}})
	if r.code != http.StatusSeeOther || r.loc != "/agents/ok?saved=1" {
		t.Fatalf("valid agent: %d %q\n%s", r.code, r.loc, r.body)
	}
	a, err := s.svc.Agent(t.Context(), "ok")
	if err != nil || a.MaxParallelTasks != 2 || a.Overflow != corral.OverflowQueue || a.Timeout.D() != 90*time.Second || a.Env["B"] != "x=y" {
		t.Fatalf("agent as created: %+v %v", a, err)
	}
	if r := b.post("/agents", url.Values{"csrf": {csrf}, "name": {"ok"}, "kind": {"shell"}}); !strings.Contains(r.body, "exists already") {
		t.Fatalf("duplicate name: %d\n%s", r.code, r.body)
	}
	r = b.post("/agents/ok", url.Values{"csrf": {csrf}, "kind": {"shell"}, "max_parallel_tasks": {"5"}})
	if r.code != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", r.code, r.body)
	}
	if a, _ := s.svc.Agent(t.Context(), "ok"); a.MaxParallelTasks != 5 {
		t.Fatalf("edit not applied: %+v", a)
	}
	if r := b.get("/agents/ok?saved=1"); !strings.Contains(r.body, "Saved.") || !strings.Contains(r.body, `value="5"`) {
		t.Fatalf("edit page: %s", r.body)
	}
}

func TestTaskFormRefusesAnEmptyTaskAndShowsARejectedOne(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "one", Kind: corral.KindShell, MaxParallelTasks: 1}); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	csrf := b.login()
	if r := b.post("/tasks", url.Values{"csrf": {csrf}, "agent": {"one"}, "input": {"  "}, "timeout": {"x"}}); r.code != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, `id="input-error"`) || !strings.Contains(r.body, `id="timeout-error"`) {
		t.Fatalf("empty task: %d\n%s", r.code, r.body)
	}
	// The service is not started: the first task holds the only slot.
	first := b.post("/tasks", url.Values{"csrf": {csrf}, "agent": {"one"}, "input": {"sleep 1"}})
	second := b.post("/tasks", url.Values{"csrf": {csrf}, "agent": {"one"}, "input": {"sleep 1"}})
	if first.code != http.StatusSeeOther || second.code != http.StatusSeeOther || first.loc == second.loc {
		t.Fatalf("submits: %d %q, %d %q", first.code, first.loc, second.code, second.loc)
	}
	r := b.get(second.loc)
	if !strings.Contains(r.body, `<span class="badge muted">rejected</span>`) || !strings.Contains(r.body, "agent at capacity (1/1") || !strings.Contains(r.body, "refused at admission") {
		t.Fatalf("rejected execution page:\n%s", r.body)
	}
	if r := b.get("/executions"); !strings.Contains(r.body, `<span class="errtype">at capacity</span>`) {
		t.Fatalf("the list does not say why a task was rejected:\n%s", r.body)
	}
}

func TestExecutionsListFiltersByAgentStatusAndTime(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	ctx := t.Context()
	for _, n := range []string{"red", "blue"} {
		if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: n, Kind: corral.KindShell, Overflow: corral.OverflowQueue, MaxParallelTasks: 1}); err != nil {
			t.Fatal(err)
		}
	}
	redRun, _ := s.svc.Submit(ctx, service.Task{Agent: "red", Input: "echo red-run"})
	redQueued, _ := s.svc.Submit(ctx, service.Task{Agent: "red", Input: "echo red-queued"})
	blueRun, _ := s.svc.Submit(ctx, service.Task{Agent: "blue", Input: "echo blue-run"})
	b := s.browser()
	b.login()
	has := func(path string, in, out []*corral.Execution) {
		t.Helper()
		r := b.get(path)
		if r.code != 200 {
			t.Fatalf("GET %s: %d", path, r.code)
		}
		for _, e := range in {
			if !strings.Contains(r.body, e.ID) {
				t.Errorf("GET %s lacks %s (%s)", path, e.ID, e.Input)
			}
		}
		for _, e := range out {
			if strings.Contains(r.body, ">"+e.ID+"<") {
				t.Errorf("GET %s shows %s (%s)", path, e.ID, e.Input)
			}
		}
	}
	all := []*corral.Execution{redRun, redQueued, blueRun}
	has("/executions", all, nil)
	has("/executions?agent=red", []*corral.Execution{redRun, redQueued}, []*corral.Execution{blueRun})
	has("/executions?status=queued", []*corral.Execution{redQueued}, []*corral.Execution{redRun, blueRun})
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04")
	has("/executions?since="+future, nil, all)
	has("/executions?range=1h&until="+future, all, nil)
	if r := b.get("/executions?since=yesterday"); !strings.Contains(r.body, "is not a time such as") {
		t.Fatalf("bad time: %s", r.body)
	}
}

// readEvents reads Server-Sent Events from path until stop says so.
func readEvents(t *testing.T, b *browser, path string, stop func(event, data string) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.s.srv.URL+path, nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "":
			if event != "" && stop(event, strings.Join(data, "\n")) {
				return
			}
			event, data = "", nil
		}
	}
	t.Fatalf("event stream %s ended: %v", path, sc.Err())
}

func TestLiveListSendsNewRunsAndTheirEnd(t *testing.T) {
	s := newStack(t, stackOpt{token: token, started: true})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "live", Kind: corral.KindShell}); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.login()
	var id string
	updates := 0
	readEvents(t, b, "/ui/live/executions?agent=live", func(event, data string) bool {
		if event != "html" {
			t.Fatalf("unexpected event %q", event)
		}
		updates++
		if updates == 1 {
			if !strings.Contains(data, "No executions match") {
				t.Fatalf("first update: %s", data)
			}
			e, err := s.svc.Submit(ctx, service.Task{Agent: "live", Input: "echo hi"})
			if err != nil {
				t.Fatal(err)
			}
			id = e.ID
			return false
		}
		return strings.Contains(data, id) && strings.Contains(data, ">succeeded<")
	})
	readEvents(t, b, "/ui/live/agents", func(event, data string) bool {
		return strings.Contains(data, "0/3 running") && strings.Contains(data, "100%")
	})
}

func TestExecutionPageShowsSupervisionFactsAndTheLogDownloads(t *testing.T) {
	s := newStack(t, stackOpt{token: token, started: true})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "sh", Kind: corral.KindShell}); err != nil {
		t.Fatal(err)
	}
	e, err := s.svc.Submit(ctx, service.Task{Agent: "sh", Input: "echo out-line; echo '<b>err-line</b>' >&2; sleep 300 & exit 4"})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, "the run to end", func() bool {
		e, err = s.svc.Execution(ctx, e.ID)
		return err == nil && e.Status.Terminal()
	})
	// The page shows the record's count of processes killed, whatever it
	// is: under the task guard the background job may die with the run's
	// pid namespace rather than by corral's signal, and then the record
	// counts none (an open question of the supervision core's, not the
	// page's).
	if e.Status != corral.StatusFailed {
		t.Fatalf("execution: %+v", e)
	}
	b := s.browser()
	b.login()
	r := b.get("/executions/" + e.ID)
	for _, want := range []string{"error type: exit", "exit code 4", "<dt>Containment</dt><dd>" + string(e.Containment), "out-line", "&lt;b&gt;err-line&lt;/b&gt;", `class="line stderr"`, "Run again"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("execution page lacks %q", want)
		}
	}
	if strings.Contains(r.body, "<b>err-line</b>") {
		t.Error("output reached the page unescaped")
	}
	if !strings.Contains(r.body, `<dd class="num" id="killed">`+itoa(e.Killed)) {
		t.Errorf("processes killed not shown (%d)", e.Killed)
	}
	log := b.get("/executions/" + e.ID + "/log")
	if log.code != 200 || !strings.Contains(log.h.Get("Content-Disposition"), `attachment; filename="corral-`+e.ID+`.log"`) ||
		!strings.Contains(log.body, "stdout out-line") || !strings.Contains(log.body, "stderr <b>err-line</b>") {
		t.Fatalf("log download: %d %v\n%s", log.code, log.h, log.body)
	}
	jl := b.get("/executions/" + e.ID + "/log?format=jsonl")
	if jl.code != 200 || !strings.Contains(jl.body, `"stream":"stdout","text":"out-line"`) {
		t.Fatalf("JSON lines download: %d\n%s", jl.code, jl.body)
	}
	frag := b.get("/executions/" + e.ID + "/summary")
	if frag.code != 200 || !strings.HasPrefix(strings.TrimSpace(frag.body), `<div id="summary"`) || strings.Contains(frag.body, "<html") {
		t.Fatalf("summary fragment: %d\n%s", frag.code, frag.body)
	}
}

func TestSchedulesPageCreatesTogglesTriggersAndDeletes(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	ctx := t.Context()
	if _, err := s.svc.CreateAgent(ctx, &corral.Agent{Name: "cron", Kind: corral.KindShell}); err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	csrf := b.login()
	if r := b.post("/schedules", url.Values{"csrf": {csrf}, "agent": {"cron"}, "cron": {"not a cron"}, "input": {"date"}}); r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="s-cron-error"`) {
		t.Fatalf("bad cron: %d\n%s", r.code, r.body)
	}
	if r := b.post("/schedules", url.Values{"csrf": {csrf}, "agent": {"cron"}, "cron": {"@hourly"}, "time_zone": {"Mars/Olympus"}, "input": {"date"}}); r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="s-tz-error"`) {
		t.Fatalf("bad zone: %d\n%s", r.code, r.body)
	}
	r := b.post("/schedules", url.Values{"csrf": {csrf}, "agent": {"cron"}, "cron": {"@hourly"}, "time_zone": {"Europe/Paris"}, "input": {"date"}, "enabled": {"1"}})
	if r.code != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", r.code, r.body)
	}
	list, _, _ := s.svc.Schedules(ctx, service.ScheduleFilter{Agent: "cron"})
	if len(list) != 1 || !list[0].Enabled || list[0].NextFireAt == nil {
		t.Fatalf("schedules: %+v", list)
	}
	id := list[0].ID
	page := b.get("/schedules")
	if !strings.Contains(page.body, `<time datetime="`+list[0].NextFireAt.UTC().Format(time.RFC3339)+`"`) {
		t.Fatalf("next fire time not shown:\n%s", page.body)
	}
	if r := b.post("/schedules/"+id+"/disable", url.Values{"csrf": {csrf}}); r.code != http.StatusSeeOther {
		t.Fatalf("disable: %d", r.code)
	}
	if sc, _ := s.svc.Schedule(ctx, id); sc.Enabled || sc.NextFireAt != nil {
		t.Fatalf("disabled schedule: %+v", sc)
	}
	if r := b.post("/schedules/"+id+"/enable", url.Values{"csrf": {csrf}}); r.code != http.StatusSeeOther {
		t.Fatalf("enable: %d", r.code)
	}
	r = b.post("/schedules/"+id+"/trigger", url.Values{"csrf": {csrf}})
	if r.code != http.StatusSeeOther || !strings.HasPrefix(r.loc, "/executions/") {
		t.Fatalf("trigger: %d %q", r.code, r.loc)
	}
	e, err := s.svc.Execution(ctx, strings.TrimPrefix(r.loc, "/executions/"))
	if err != nil || e.Trigger != corral.TriggerSchedule || e.ScheduleID != id {
		t.Fatalf("triggered execution: %+v %v", e, err)
	}
	if r := b.post("/schedules/"+id+"/delete", url.Values{"csrf": {csrf}}); r.code != http.StatusSeeOther {
		t.Fatalf("delete: %d", r.code)
	}
	if _, err := s.svc.Schedule(ctx, id); err == nil {
		t.Fatal("schedule not deleted")
	}
}

// TestAgentPageSetsBudgetsAndRetriesAndShowsTheSpend: the form's budget
// and retry fields (declared once, in corral.AgentFields()) reach the
// agent, and its page shows each window's bar.
func TestAgentPageSetsBudgetsAndRetriesAndShowsTheSpend(t *testing.T) {
	s := newStack(t, stackOpt{token: token})
	b := s.browser()
	csrf := b.login()
	r := b.post("/agents", url.Values{"csrf": {csrf}, "name": {"thrift"}, "kind": {"shell"}, "daily_cost_usd": {"2.5"}, "max_tokens": {"1000"},
		"budget_time_zone": {"Europe/Paris"}, "budget_overrun": {"finish"}, "max_attempts": {"3"}, "retry_on": {"exit, timeout"}, "labels": {"a, b"}})
	if r.code != http.StatusSeeOther {
		t.Fatalf("agent with a budget: %d\n%s", r.code, r.body)
	}
	a, err := s.svc.Agent(t.Context(), "thrift")
	if err != nil || a.DailyCostUSD != 2.5 || a.MaxTokens != 1000 || a.BudgetTimeZone != "Europe/Paris" || a.BudgetOverrun != "finish" ||
		a.MaxAttempts != 3 || len(a.RetryOn) != 2 || len(a.Labels) != 2 {
		t.Fatalf("agent as created: %+v %v", a, err)
	}
	page := b.get("/agents/thrift")
	for _, want := range []string{`id="spend-daily"`, "of $2.5000", `value="2.5"`, `name="retry_on" value="exit, timeout"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the agent page lacks %s", want)
		}
	}
	if r := b.post("/agents", url.Values{"csrf": {csrf}, "name": {"bad"}, "kind": {"shell"}, "daily_cost_usd": {"lots"}}); !strings.Contains(r.body, `id="daily_cost_usd-error"`) {
		t.Fatalf("a budget that is not a number: %d", r.code)
	}
}
