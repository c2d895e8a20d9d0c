package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/store/storetest"
)

// sample is what the sampler saw over a run.
type sample struct {
	samples           int
	peakTotal         int            // connections of all workers at once
	peakBy            map[string]int // most connections of each worker (application_name)
	maxSlots, maxRuns int            // most slots held, and runs running, by one agent
	over              int            // samples where an agent held more slots than it has
}

// sampler reads, every 50 ms in one statement, the workers'
// connections (pg_stat_activity by application_name, corral/WORKER_ID)
// and the slots and running executions of every agent.
type sampler struct {
	done  chan sample
	stopc chan struct{}
}

const sampleQuery = `
SELECT
  (SELECT coalesce(json_object_agg(application_name, n), '{}') FROM
     (SELECT application_name, count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'corral/%' GROUP BY 1) c)::text,
  (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM corral_slots GROUP BY agent) s)::int,
  (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM corral_executions WHERE status = 'running' GROUP BY agent) r)::int,
  (SELECT count(*) FROM (SELECT s.agent FROM corral_slots s JOIN corral_agents a ON a.name = s.agent
     GROUP BY s.agent, a.doc->>'max_parallel_tasks' HAVING count(*) > (a.doc->>'max_parallel_tasks')::int) o)::int`

func startSampler(ctx context.Context, db string) *sampler {
	conn, err := pgx.Connect(ctx, db)
	benchutil.Check(err)
	sm := &sampler{done: make(chan sample, 1), stopc: make(chan struct{})}
	go func() {
		defer conn.Close(context.Background())
		s := sample{peakBy: map[string]int{}}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			var by string
			var slots, runs, over int
			if err := conn.QueryRow(ctx, sampleQuery).Scan(&by, &slots, &runs, &over); err == nil {
				var m map[string]int
				benchutil.Check(json.Unmarshal([]byte(by), &m))
				total := 0
				for app, n := range m {
					total += n
					s.peakBy[app] = max(s.peakBy[app], n)
				}
				s.samples++
				s.peakTotal = max(s.peakTotal, total)
				s.maxSlots, s.maxRuns = max(s.maxSlots, slots), max(s.maxRuns, runs)
				if over > 0 {
					s.over++
				}
			}
			select {
			case <-sm.stopc:
				sm.done <- s
				return
			case <-ctx.Done():
				sm.done <- s
				return
			case <-tick.C:
			}
		}
	}()
	return sm
}

func (sm *sampler) stop() sample {
	close(sm.stopc)
	return <-sm.done
}

// recordCheck is what the records say of a run.
type recordCheck struct {
	recorded, succeeded, extra, dupSubmitted, retried int
	slots                                             storetest.SlotReplay
}

// checkRecords reads every execution: each submitted id recorded once,
// terminal and succeeded, none besides them; and replays the slot log
// (storetest.LogSlots): no slot held twice, no agent over its slots.
func checkRecords(ctx context.Context, admin *pgx.Conn, ids []string) recordCheck {
	var rc recordCheck
	want := map[string]bool{}
	for _, id := range ids {
		if want[id] {
			rc.dupSubmitted++
		}
		want[id] = true
	}
	rows, err := admin.Query(ctx, `SELECT id, status, coalesce((doc->>'attempt')::int, 1) FROM corral_executions`)
	benchutil.Check(err)
	for rows.Next() {
		var id, status string
		var attempt int
		benchutil.Check(rows.Scan(&id, &status, &attempt))
		if !want[id] {
			rc.extra++
			continue
		}
		rc.recorded++
		if status == "succeeded" {
			rc.succeeded++
		}
		if attempt > 1 {
			rc.retried++
		}
	}
	benchutil.Check(rows.Err())
	rc.slots, err = storetest.CheckSlots(ctx, admin)
	benchutil.Check(err)
	return rc
}

// problems says what the records show wrong, or "".
func (rc recordCheck) problems(submitted int) string {
	var p []string
	if rc.recorded != submitted || rc.dupSubmitted > 0 {
		p = append(p, fmt.Sprintf("%d of %d submitted tasks recorded (%d ids twice)", rc.recorded, submitted, rc.dupSubmitted))
	}
	if rc.succeeded != rc.recorded {
		p = append(p, fmt.Sprintf("%d of %d succeeded", rc.succeeded, rc.recorded))
	}
	if rc.extra > 0 {
		p = append(p, fmt.Sprintf("%d executions recorded that were not submitted", rc.extra))
	}
	if o := rc.slots.Overbooked(); o != "" {
		p = append(p, "overbooked: "+o)
	}
	if rc.slots.Takes != submitted || rc.slots.Releases != submitted {
		p = append(p, fmt.Sprintf("the slot log has %d takes and %d releases for %d tasks", rc.slots.Takes, rc.slots.Releases, submitted))
	}
	return strings.Join(p, "; ")
}

// histogram is a Prometheus histogram added up over workers.
type histogram struct {
	bounds []float64 // upper bounds, +Inf last
	counts []float64 // cumulative
}

// add adds the histogram name of a /metrics text.
func (h *histogram) add(text, name string) {
	i := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+`_bucket{le="`)
		if !ok {
			continue
		}
		le, v, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		b, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(v, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if i == len(h.bounds) {
			h.bounds, h.counts = append(h.bounds, b), append(h.counts, 0)
		}
		h.counts[i] += n
		i++
	}
}

// quantile is the q-quantile as Prometheus's histogram_quantile reads
// it: linear within the bucket it falls in.
func (h *histogram) quantile(q float64) string {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return "-"
	}
	total := h.counts[len(h.counts)-1]
	rank := q * total
	for i, c := range h.counts {
		if c < rank {
			continue
		}
		if math.IsInf(h.bounds[i], 1) {
			return fmt.Sprintf("> %s", secs(h.bounds[i-1]))
		}
		lo, below := 0.0, 0.0
		if i > 0 {
			lo, below = h.bounds[i-1], h.counts[i-1]
		}
		return secs(lo + (h.bounds[i]-lo)*(rank-below)/(c-below))
	}
	return "-"
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Microsecond).String()
}

// sumCounter adds up every sample of the counter name in a /metrics text.
func sumCounter(text, name string) int {
	total := 0.0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				total += v
			}
		}
	}
	return int(total)
}

// cpuSnap is CPU time used so far: the workers' own, their reaped
// children's (the runs' processes), each PostgreSQL backend of theirs,
// this benchmark's (its clients and sampler), and the machine's (every
// core, busy).
type cpuSnap struct {
	at                             time.Time
	workers, tasks, bench, machine time.Duration
	backends                       map[int]time.Duration
}

// cpuShare is CPU time over a wall time.
type cpuShare struct {
	wall                                     time.Duration
	workers, tasks, postgres, bench, machine time.Duration
}

func (c cpuShare) share(d time.Duration) string {
	return fmt.Sprintf("%.0f%%", 100*d.Seconds()/c.wall.Seconds())
}

// cpu takes a snapshot of the fleet's CPU time, and of its backends'
// (named by pg_stat_activity).
func (fl *serveFleet) cpu(ctx context.Context, admin *pgx.Conn) cpuSnap {
	s := cpuSnap{at: time.Now(), backends: map[int]time.Duration{}}
	for _, w := range fl.workers {
		self, kids := procCPU(w.cmd.Process.Pid)
		s.workers += self
		s.tasks += kids
	}
	rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'corral/%'`)
	benchutil.Check(err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	benchutil.Check(err)
	for _, pid := range pids {
		self, _ := procCPU(int(pid))
		s.backends[int(pid)] = self
	}
	s.bench = cpu()
	s.machine = machineBusy()
	return s
}

// since is the CPU used between then and s; a backend that ended in
// between is not counted.
func (s cpuSnap) since(then cpuSnap) cpuShare {
	c := cpuShare{wall: s.at.Sub(then.at), workers: s.workers - then.workers, tasks: s.tasks - then.tasks, bench: s.bench - then.bench, machine: s.machine - then.machine}
	for pid, d := range s.backends {
		c.postgres += d - then.backends[pid]
	}
	return c
}

// clockTick is the unit of /proc's CPU times (USER_HZ).
const clockTick = 10 * time.Millisecond

// procCPU reads a process's own CPU time and its reaped children's from
// /proc/PID/stat; zero when it is gone.
func procCPU(pid int) (self, kids time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0
	}
	n := func(k int) time.Duration {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		return time.Duration(v) * clockTick
	}
	return n(11) + n(12), n(13) + n(14) // utime stime, cutime cstime
}

// machineBusy is the time every core of the machine was not idle.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)[1:]
	var busy int64
	for k, v := range f {
		x, _ := strconv.ParseInt(v, 10, 64)
		if k != 3 && k != 4 && k < 8 { // idle, iowait; guest is in user already
			busy += x
		}
	}
	return time.Duration(busy) * clockTick
}

// loadAverage is the machine's load average over the last minute, "-"
// where /proc/loadavg is not.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "-"
	}
	return strings.Fields(string(b))[0]
}
