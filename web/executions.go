package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/sse"
	"github.com/corralrun/corral/service"
)

// pageSize is the number of executions per page of the list.
const pageSize = 50

// maxChartRuns bounds the executions a chart reads.
const maxChartRuns = 5000

// ranges are the time ranges the executions list offers.
var ranges = []struct {
	Value, Label string
	D            time.Duration
}{
	{"1h", "Last hour", time.Hour},
	{"24h", "Last 24 hours", 24 * time.Hour},
	{"7d", "Last 7 days", 7 * 24 * time.Hour},
	{"30d", "Last 30 days", 30 * 24 * time.Hour},
	{"all", "All time", 0},
}

// listQuery is the executions list's filter as the form gives it.
type listQuery struct {
	Agent, Status, Range, Since, Until, Cursor string
	filter                                     service.ExecutionFilter
	from, to                                   time.Time
	label                                      string
	Errors                                     []string
}

// Encode returns the query string of the filter (without the cursor).
func (q *listQuery) Encode() string {
	v := url.Values{}
	for k, s := range map[string]string{"agent": q.Agent, "status": q.Status, "range": q.Range, "since": q.Since, "until": q.Until} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

const formTime = "2006-01-02T15:04"

func (u *UI) readListQuery(r *http.Request) *listQuery {
	v := r.URL.Query()
	q := &listQuery{Agent: v.Get("agent"), Status: v.Get("status"), Range: v.Get("range"), Since: v.Get("since"), Until: v.Get("until"), Cursor: v.Get("cursor")}
	if q.Range == "" {
		q.Range = "24h"
	}
	now := u.now()
	q.to = now
	f := service.ExecutionFilter{Agent: q.Agent, Cursor: q.Cursor, Limit: pageSize}
	if q.Status != "" {
		st, err := corral.ParseStatus(q.Status)
		if err != nil {
			q.Errors = append(q.Errors, capitalize(err.Error())+".")
			q.Status = ""
		} else {
			f.Statuses = []corral.Status{st}
		}
	}
	found := false
	for _, rg := range ranges {
		if rg.Value == q.Range {
			found = true
			q.label = strings.ToLower(rg.Label)
			if rg.D > 0 {
				f.Since = now.Add(-rg.D)
			}
		}
	}
	if !found {
		q.Errors = append(q.Errors, "Unknown time range "+q.Range+"; showing the last 24 hours.")
		q.Range, q.label, f.Since = "24h", "last 24 hours", now.Add(-24*time.Hour)
	}
	for _, tf := range []struct {
		name string
		s    *string
		dst  *time.Time
	}{{"From", &q.Since, &f.Since}, {"Until", &q.Until, &f.Until}} {
		if *tf.s == "" {
			continue
		}
		t, err := time.Parse(formTime, *tf.s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, *tf.s); err != nil {
				q.Errors = append(q.Errors, tf.name+" "+*tf.s+" is not a time such as 2026-01-02T15:04 (UTC).")
				*tf.s = ""
				continue
			}
		}
		*tf.dst = t.UTC()
		q.label = "the chosen range"
	}
	q.from = f.Since
	if !f.Until.IsZero() {
		q.to = f.Until
	}
	q.filter = f
	return q
}

type executionsData struct {
	Q       *listQuery
	Agents  []*corral.Agent
	Ranges  any
	Rows    *execRows
	Chart   *chart
	LiveURL string
}

// execRows is the table body of the executions list.
type execRows struct {
	Executions []*corral.Execution
	Now        time.Time
	Next       string // query of the next page, "" on the last
}

func (u *UI) execRows(ctx context.Context, q *listQuery) (*execRows, error) {
	list, next, err := u.svc.Executions(ctx, q.filter)
	if err != nil {
		return nil, err
	}
	rows := &execRows{Executions: list, Now: u.now()}
	if next != "" {
		v, _ := url.ParseQuery(q.Encode())
		v.Set("cursor", next)
		rows.Next = v.Encode()
	}
	return rows, nil
}

func (u *UI) executionsPage(w http.ResponseWriter, r *http.Request, p *page) {
	q := u.readListQuery(r)
	agents, err := u.svc.Agents(r.Context())
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	rows, err := u.execRows(r.Context(), q)
	if errors.Is(err, service.ErrInvalid) && q.Cursor != "" {
		q.Errors = append(q.Errors, "That page of the list no longer exists; showing the newest.")
		q.Cursor, q.filter.Cursor = "", ""
		rows, err = u.execRows(r.Context(), q)
	}
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	cf := q.filter
	cf.Cursor = ""
	execs, err := u.executionsSince(r.Context(), cf)
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	from := q.from
	if from.IsZero() && len(execs) > 0 {
		from = execs[len(execs)-1].CreatedAt
	}
	if from.IsZero() {
		from = q.to.Add(-24 * time.Hour)
	}
	d := executionsData{Q: q, Agents: agents, Ranges: ranges, Rows: rows, Chart: buildChart(execs, from, q.to, u.now(), q.label)}
	if q.Cursor == "" {
		d.LiveURL = "/ui/live/executions?" + q.Encode()
	}
	p.Title, p.Nav, p.Data = "Executions", "executions", d
	u.render(w, r, http.StatusOK, "executions", p)
}

// liveExecutions streams the first page of the list as it changes: new
// runs appear, running ones finish.
func (u *UI) liveExecutions(w http.ResponseWriter, r *http.Request, p *page) {
	q := u.readListQuery(r)
	q.filter.Cursor = ""
	fixedUntil := q.Until != ""
	u.live(w, r, func(ctx context.Context) ([]byte, error) {
		if !fixedUntil {
			q.filter.Until = time.Time{}
		}
		rows, err := u.execRows(ctx, q)
		if err != nil {
			return nil, err
		}
		return u.renderFragment("exec_rows", rows)
	})
}

// executionsSince reads the executions f selects, newest first, up to
// maxChartRuns.
func (u *UI) executionsSince(ctx context.Context, f service.ExecutionFilter) ([]*corral.Execution, error) {
	f.Limit, f.Cursor = 1000, ""
	var out []*corral.Execution
	for len(out) < maxChartRuns {
		list, next, err := u.svc.Executions(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
		if next == "" {
			break
		}
		f.Cursor = next
	}
	return out, nil
}

// execView is an execution with what its page shows besides the record.
type execView struct {
	E        *corral.Execution
	Agent    *corral.Agent // nil if deleted
	Headless bool
	Now      time.Time
	Timeline *headless.Timeline
	Calls    []callView
	// Lines are the last records of the log, rendered; Omitted counts
	// the earlier ones not shown; LastSeq is the last record's number.
	Lines   []logLine
	Omitted int
	LastSeq int
	CSRF    string
	// Deliveries are the webhook deliveries of the run's events.
	Deliveries []*corral.WebhookDelivery
}

// Running reports whether the execution may still change.
func (v *execView) Running() bool { return !v.E.Status.Terminal() }

// Duration is how long it ran, or has been running.
func (v *execView) Duration() time.Duration {
	e := v.E
	switch {
	case e.DurationMS > 0:
		return time.Duration(e.DurationMS) * time.Millisecond
	case e.StartedAt != nil && e.FinishedAt != nil:
		return e.FinishedAt.Sub(*e.StartedAt)
	case e.StartedAt != nil && !e.Status.Terminal():
		return v.Now.Sub(*e.StartedAt)
	}
	return -1
}

// callView is one row of the tool-call timeline.
type callView struct {
	headless.ToolCall
	N        int
	Offset   time.Duration // from the first call
	Dur      time.Duration
	State    string // ok, error, open, stalled, unfinished
	Limit    time.Duration
	BarX     float64 // percent of the timeline's span
	BarW     float64
	Subagent bool
}

// maxLines is how many log records the page renders; the download has
// them all.
const maxLines = 2000

func (u *UI) execView(ctx context.Context, id string, withLog bool) (*execView, error) {
	e, err := u.svc.Execution(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &execView{E: e, Now: u.now()}
	if a, err := u.svc.Agent(ctx, e.Agent); err == nil {
		v.Agent = a
		v.Headless = a.Kind == corral.KindHeadless
	}
	log := newStreamLog(v.Agent)
	ring := make([]logLine, 0, 64)
	_, err = u.svc.Replay(ctx, id, 0, func(seq int, raw []byte) error {
		var rec service.LogRecord
		if json.Unmarshal(raw, &rec) != nil {
			return nil
		}
		v.LastSeq = seq
		if rec.Stream == "event" {
			v.Headless = true
			log.add(rec.Time, rec.Text)
		}
		if withLog {
			if len(ring) == maxLines {
				copy(ring, ring[1:])
				ring = ring[:maxLines-1]
				v.Omitted++
			}
			ring = append(ring, renderRecord(rec))
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("read the log of %s: %w", id, err)
	}
	v.Lines = ring
	if v.Headless {
		v.Timeline = &log.tl
		v.Calls = calls(v)
	}
	v.Deliveries, _ = u.svc.Deliveries(ctx, id)
	return v, nil
}

// calls lays out the timeline and decides what to highlight: errors,
// calls open past their stall limit or left open by a stalled turn
// (stalled), calls left open by a turn that ended otherwise (unfinished).
func calls(v *execView) []callView {
	end := v.Now
	if v.E.FinishedAt != nil {
		end = *v.E.FinishedAt
	}
	tools := v.Timeline.Tools(end)
	if len(tools) == 0 {
		return nil
	}
	start := tools[0].Start
	span := end.Sub(start)
	for _, c := range tools {
		span = max(span, c.Start.Add(c.Duration()).Sub(start))
	}
	span = max(span, time.Millisecond)
	out := make([]callView, 0, len(tools))
	for i, c := range tools {
		cv := callView{ToolCall: c, N: i + 1, Offset: c.Start.Sub(start), Dur: c.Duration(),
			Limit: c.StallLimit(), Subagent: c.ParentID != ""}
		switch {
		case c.Error:
			cv.State = "error"
		case !c.Open:
			cv.State = "ok"
		case v.E.ErrorType == corral.ErrorStall, c.Stalled():
			cv.State = "stalled"
		case v.E.Status.Terminal():
			cv.State = "unfinished"
		default:
			cv.State = "open"
		}
		cv.BarX = 100 * float64(cv.Offset) / float64(span)
		cv.BarW = max(100*float64(cv.Dur)/float64(span), 0.5)
		if cv.BarX+cv.BarW > 100 {
			cv.BarW = max(100-cv.BarX, 0.5)
		}
		out = append(out, cv)
	}
	return out
}

func (u *UI) executionPage(w http.ResponseWriter, r *http.Request, p *page) {
	v, err := u.execView(r.Context(), r.PathValue("id"), true)
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	v.CSRF = p.CSRF
	switch r.URL.Query().Get("done") {
	case "cancel":
		p.Notice = "Cancellation requested: the run is being stopped."
	case "retry":
		p.Notice = "Submitted again."
	}
	p.Title, p.Nav, p.Data = "Execution "+v.E.ID, "executions", v
	u.render(w, r, http.StatusOK, "execution", p)
}

// executionSummary renders the part of the execution page that changes
// while it runs (status, facts, timeline, actions), for the page's
// script to swap in.
func (u *UI) executionSummary(w http.ResponseWriter, r *http.Request, p *page) {
	v, err := u.execView(r.Context(), r.PathValue("id"), false)
	if err != nil {
		if errors.Is(err, service.ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		u.fail(w, r, p, err)
		return
	}
	v.CSRF = p.CSRF
	u.fragment(w, "exec_summary", v)
}

// executionLog downloads the full log: as text (the default) or, with
// ?format=jsonl, the records as stored.
func (u *UI) executionLog(w http.ResponseWriter, r *http.Request, p *page) {
	id := r.PathValue("id")
	if _, err := u.svc.Execution(r.Context(), id); err != nil {
		u.fail(w, r, p, err)
		return
	}
	jsonl := r.URL.Query().Get("format") == "jsonl"
	name, ctype := "corral-"+id+".log", "text/plain; charset=utf-8"
	if jsonl {
		name, ctype = "corral-"+id+".jsonl", "application/x-ndjson"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", `attachment; filename="`+safeFileName(name)+`"`)
	h.Set("Cache-Control", "no-store")
	// A download may take long; each write has its deadline instead, so
	// that a client that stops reading is dropped.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	w.Header().Set("Connection", "close")
	var buf []byte
	_, err := u.svc.Replay(r.Context(), id, 0, func(seq int, raw []byte) error {
		if jsonl {
			buf = append(append(buf[:0], raw...), '\n')
		} else {
			var rec service.LogRecord
			if json.Unmarshal(raw, &rec) != nil {
				return nil
			}
			buf = fmt.Appendf(buf[:0], "%s %-6s %s\n", rec.Time.UTC().Format("2006-01-02T15:04:05.000Z"), rec.Stream, rec.Text)
		}
		rc.SetWriteDeadline(time.Now().Add(sse.WriteTimeout))
		_, err := w.Write(buf)
		return err
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		u.log.Warn("web UI: log download", "execution", id, "err", err)
	}
}

func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

func (u *UI) cancelExecution(w http.ResponseWriter, r *http.Request, p *page) {
	id := r.PathValue("id")
	_, err := u.svc.Cancel(r.Context(), id)
	switch {
	case err == nil:
		seeOther(w, r, "/executions/"+url.PathEscape(id)+"?done=cancel")
	case errors.Is(err, service.ErrConflict):
		seeOther(w, r, "/executions/"+url.PathEscape(id)) // it finished first
	default:
		u.fail(w, r, p, err)
	}
}

func (u *UI) retryExecution(w http.ResponseWriter, r *http.Request, p *page) {
	e, err := u.svc.Retry(r.Context(), r.PathValue("id"))
	var rej *service.RejectedError
	switch {
	case err == nil || errors.As(err, &rej):
		seeOther(w, r, "/executions/"+url.PathEscape(e.ID)+"?done=retry")
	case errors.Is(err, service.ErrConflict):
		u.errorPage(w, r, p, http.StatusConflict, "Still running", "This execution has not finished yet; retry it once it has.")
	default:
		u.fail(w, r, p, err)
	}
}
