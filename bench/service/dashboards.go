package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/api"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/sqlite"
	"github.com/corralrun/corral/web"
)

// runDashboards measures what live agent dashboards cost the service:
// 12 agents with 5,000 schedules between them, and n browsers on the
// agents page's live stream (/ui/live/agents), with no task running and
// with two tasks a second, each beside the same service without
// dashboards, measured in the same run. CPU is this process's user and
// system time (the dashboards' readers are in it too; the tasks' own
// processes are not), as a share of one core.
func runDashboards(ctx context.Context, n int, span time.Duration) {
	dir := benchutil.TempDir("", "corral-dash-bench-")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "corral.db")})
	benchutil.Check(err)
	defer st.Close()
	svc, err := service.New(service.Config{Store: st, DataDir: dir})
	benchutil.Check(err)
	benchutil.Check(svc.Start(ctx))
	defer svc.Close(ctx)
	const token = "bench-token-0123456789"
	ui, err := web.New(web.Config{Service: svc, Token: token})
	benchutil.Check(err)
	h, err := api.New(api.Config{Service: svc, Token: token, UI: ui, SessionAuth: ui.SessionAuth})
	benchutil.Check(err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	for i := range 12 {
		_, err := svc.CreateAgent(ctx, &corral.Agent{Name: fmt.Sprintf("agent-%02d", i), Kind: corral.KindShell, MaxParallelTasks: 2, Overflow: corral.OverflowQueue})
		benchutil.Check(err)
	}
	crons := []string{"@hourly", "*/5 * * * *", "0 9 * * 1-5", "@daily", "17 */2 * * *"}
	for i := range 5000 {
		_, err := svc.CreateSchedule(ctx, &corral.Schedule{Agent: fmt.Sprintf("agent-%02d", i%12), Cron: crons[i%len(crons)], Input: "true", Enabled: i%7 != 0})
		benchutil.Check(err)
	}
	fmt.Printf("live agent dashboards: 12 agents, 5,000 schedules, %d browsers on /ui/live/agents, %s per figure\n", n, span)

	load := func(tasks bool) (stop func()) {
		if !tasks {
			return func() {}
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				case <-t.C:
				}
				svc.Submit(ctx, service.Task{Agent: fmt.Sprintf("agent-%02d", i%12), Input: "true"})
			}
		}()
		return func() { close(done); wg.Wait() }
	}
	var events atomic.Int64
	watch := func(k int) (stop func()) {
		cctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(cctx, "GET", srv.URL+"/ui/live/agents", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 64<<10), 16<<20)
				for sc.Scan() {
					if len(sc.Bytes()) > 6 && string(sc.Bytes()[:6]) == "event:" {
						events.Add(1)
					}
				}
			}()
		}
		return func() { cancel(); wg.Wait() }
	}
	measure := func(label string, dashboards int, tasks bool) {
		stopLoad := load(tasks)
		stopWatch := watch(dashboards)
		time.Sleep(2 * time.Second) // connected, first tables sent
		events.Store(0)
		c0, t0 := cpu(), time.Now()
		time.Sleep(span)
		used, wall := cpu()-c0, time.Since(t0)
		ev := events.Load()
		stopWatch()
		stopLoad()
		fmt.Printf("  %-44s %5.1f %% of a core   (%d table updates sent)\n", label, 100*used.Seconds()/wall.Seconds(), ev)
	}
	measure("service alone, idle", 0, false)
	measure(fmt.Sprintf("%d live dashboards, idle", n), n, false)
	measure("service alone, 2 tasks/s", 0, true)
	measure(fmt.Sprintf("%d live dashboards, 2 tasks/s", n), n, true)
	fmt.Println("  (target: 30 dashboards under 10 % of a core)")
}
