// Package client is a Go client of corral's task service API (see
// docs/api.md). The corral CLI's client commands use it.
//
// Errors answered by the service are *Error values carrying the HTTP
// status, the service's error code and message, and for a rejected task
// (429) the recorded execution.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral"
)

// The records of the API.
type (
	Agent     = corral.Agent
	Execution = corral.Execution
	Schedule  = corral.Schedule
	Slot      = corral.Slot
	Duration  = corral.Duration
)

// Client talks to one corral service. The zero value is not usable; use
// New.
type Client struct {
	// BaseURL is the service's address, such as http://127.0.0.1:7070.
	BaseURL string
	// Token is sent as a bearer token when not empty.
	Token string
	// HTTP is the client used; nil means one without a timeout (event
	// streams are long), so pass contexts with deadlines.
	HTTP *http.Client
}

// New returns a client of the service at baseURL ("127.0.0.1:7070" and
// "http://127.0.0.1:7070" both work).
func New(baseURL, token string) *Client {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{}}
}

// Error is an error answered by the service.
type Error struct {
	Status    int
	Code      string
	Message   string
	Execution *Execution // the rejected execution of a 429
	// RetryAfter is how long the service asked to wait (a 429 of a spent
	// budget window: until it reopens; a lockout), zero when it did not.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("corral service answered %d", e.Status)
	}
	return e.Message
}

// IsAtCapacity reports whether err is a rejection because the agent was at
// capacity.
func IsAtCapacity(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusTooManyRequests
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := check(resp); err != nil {
		return err
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("corral service: unreadable answer to %s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, body any, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	if method != http.MethodGet && method != http.MethodHead {
		// Even without a body: the service takes no state change that is
		// not JSON, which no web page can send it.
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("corral service at %s: %w (is `corral serve` running? set --addr or CORRAL_ADDR)", c.BaseURL, err)
	}
	return resp, nil
}

func check(resp *http.Response) error {
	if resp.StatusCode < 400 {
		return nil
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Execution *Execution `json:"execution"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	json.Unmarshal(b, &body)
	e := &Error{Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message, Execution: body.Execution}
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
		e.RetryAfter = time.Duration(n) * time.Second
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("corral service answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return e
}

// Health checks that the service answers.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, "GET", "/healthz", nil, nil)
}

// Metrics returns the Prometheus metrics text.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	resp, err := c.send(ctx, "GET", "/metrics", nil, "text/plain")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if err := check(resp); err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Agents lists the agents.
func (c *Client) Agents(ctx context.Context) ([]*Agent, error) {
	var out struct {
		Agents []*Agent `json:"agents"`
	}
	err := c.do(ctx, "GET", "/v1/agents", nil, &out)
	return out.Agents, err
}

// Agent returns one agent.
func (c *Client) Agent(ctx context.Context, name string) (*Agent, error) {
	var a Agent
	return &a, c.do(ctx, "GET", "/v1/agents/"+url.PathEscape(name), nil, &a)
}

// CreateAgent creates an agent; the answer has its defaults filled.
func (c *Client) CreateAgent(ctx context.Context, a *Agent) (*Agent, error) {
	var out Agent
	return &out, c.do(ctx, "POST", "/v1/agents", a, &out)
}

// UpdateAgent changes the fields of patch (JSON field names) of an agent.
func (c *Client) UpdateAgent(ctx context.Context, name string, patch map[string]any) (*Agent, error) {
	var out Agent
	return &out, c.do(ctx, "PATCH", "/v1/agents/"+url.PathEscape(name), patch, &out)
}

// DeleteAgent deletes an agent.
func (c *Client) DeleteAgent(ctx context.Context, name string) error {
	return c.do(ctx, "DELETE", "/v1/agents/"+url.PathEscape(name), nil, nil)
}

// Slots returns the slots an agent holds.
func (c *Client) Slots(ctx context.Context, agent string) (capacity int, slots []Slot, err error) {
	var out struct {
		Capacity int    `json:"capacity"`
		Slots    []Slot `json:"slots"`
	}
	err = c.do(ctx, "GET", "/v1/agents/"+url.PathEscape(agent)+"/slots", nil, &out)
	return out.Capacity, out.Slots, err
}

// Spend returns what agent's runs spent in each of its budget windows.
func (c *Client) Spend(ctx context.Context, agent string) ([]corral.WindowSpend, error) {
	var out struct {
		Windows []corral.WindowSpend `json:"windows"`
	}
	err := c.do(ctx, "GET", "/v1/agents/"+url.PathEscape(agent)+"/spend", nil, &out)
	return out.Windows, err
}

// Deliveries returns the webhook deliveries of an execution's events.
func (c *Client) Deliveries(ctx context.Context, executionID string) ([]corral.WebhookDelivery, error) {
	var out struct {
		Deliveries []corral.WebhookDelivery `json:"deliveries"`
	}
	err := c.do(ctx, "GET", "/v1/executions/"+url.PathEscape(executionID)+"/webhooks", nil, &out)
	return out.Deliveries, err
}

// Submit submits a task. A rejection is an *Error with status 429 (see
// IsAtCapacity) that holds the rejected execution.
func (c *Client) Submit(ctx context.Context, agent, input string, timeout time.Duration) (*Execution, error) {
	body := map[string]any{"input": input}
	if timeout > 0 {
		body["timeout"] = timeout.String()
	}
	var e Execution
	return &e, c.do(ctx, "POST", "/v1/agents/"+url.PathEscape(agent)+"/tasks", body, &e)
}

// ListOptions filter a listing of executions.
type ListOptions struct {
	Agent    string
	Statuses []corral.Status
	Since    time.Time
	Until    time.Time
	Limit    int
	Cursor   string
}

// Executions returns one page of executions, newest first, and the cursor
// of the next page. They are summaries (Execution.Summary: no output
// bodies, input and error cut); Execution returns a whole record.
func (c *Client) Executions(ctx context.Context, o ListOptions) ([]*Execution, string, error) {
	q := url.Values{}
	if o.Agent != "" {
		q.Set("agent", o.Agent)
	}
	if len(o.Statuses) > 0 {
		s := make([]string, len(o.Statuses))
		for i, st := range o.Statuses {
			s[i] = string(st)
		}
		q.Set("status", strings.Join(s, ","))
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.Format(time.RFC3339))
	}
	if !o.Until.IsZero() {
		q.Set("until", o.Until.Format(time.RFC3339))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	var out struct {
		Executions []*Execution `json:"executions"`
		NextCursor string       `json:"next_cursor"`
	}
	err := c.do(ctx, "GET", "/v1/executions?"+q.Encode(), nil, &out)
	return out.Executions, out.NextCursor, err
}

// Execution returns one execution.
func (c *Client) Execution(ctx context.Context, id string) (*Execution, error) {
	var e Execution
	return &e, c.do(ctx, "GET", "/v1/executions/"+url.PathEscape(id), nil, &e)
}

// Cancel cancels an execution (see the service's Cancel).
func (c *Client) Cancel(ctx context.Context, id string) (*Execution, error) {
	var e Execution
	return &e, c.do(ctx, "POST", "/v1/executions/"+url.PathEscape(id)+"/cancel", nil, &e)
}

// Retry submits a finished execution's task again.
func (c *Client) Retry(ctx context.Context, id string) (*Execution, error) {
	var e Execution
	return &e, c.do(ctx, "POST", "/v1/executions/"+url.PathEscape(id)+"/retry", nil, &e)
}

// ScheduleListOptions select a page of schedules.
type ScheduleListOptions struct {
	// Agent selects one agent's schedules; "" means every agent's.
	Agent string
	// Limit is the page size (1 to 1000); zero means the service's
	// default, 100.
	Limit int
	// Cursor continues a listing where the previous page ended.
	Cursor string
}

// Schedules returns one page of schedules, oldest first, and the cursor
// of the next page ("" at the end).
func (c *Client) Schedules(ctx context.Context, o ScheduleListOptions) ([]*Schedule, string, error) {
	var out struct {
		Schedules  []*Schedule `json:"schedules"`
		NextCursor string      `json:"next_cursor"`
	}
	path := "/v1/schedules"
	if o.Agent != "" {
		path = "/v1/agents/" + url.PathEscape(o.Agent) + "/schedules"
	}
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.do(ctx, "GET", path, nil, &out)
	return out.Schedules, out.NextCursor, err
}

// CreateSchedule creates a schedule for sc.Agent.
func (c *Client) CreateSchedule(ctx context.Context, sc *Schedule) (*Schedule, error) {
	body := map[string]any{"cron": sc.Cron, "input": sc.Input, "enabled": sc.Enabled}
	if sc.TimeZone != "" {
		body["time_zone"] = sc.TimeZone
	}
	if sc.Timeout != 0 {
		body["timeout"] = sc.Timeout
	}
	if sc.Missed != "" {
		body["missed"] = sc.Missed
	}
	var out Schedule
	return &out, c.do(ctx, "POST", "/v1/agents/"+url.PathEscape(sc.Agent)+"/schedules", body, &out)
}

// UpdateSchedule changes the fields of patch of a schedule.
func (c *Client) UpdateSchedule(ctx context.Context, agent, id string, patch map[string]any) (*Schedule, error) {
	var out Schedule
	return &out, c.do(ctx, "PATCH", "/v1/agents/"+url.PathEscape(agent)+"/schedules/"+url.PathEscape(id), patch, &out)
}

// DeleteSchedule deletes a schedule.
func (c *Client) DeleteSchedule(ctx context.Context, agent, id string) error {
	return c.do(ctx, "DELETE", "/v1/agents/"+url.PathEscape(agent)+"/schedules/"+url.PathEscape(id), nil, nil)
}

// TriggerSchedule runs a schedule's task now.
func (c *Client) TriggerSchedule(ctx context.Context, agent, id string) (*Execution, error) {
	var e Execution
	return &e, c.do(ctx, "POST", "/v1/agents/"+url.PathEscape(agent)+"/schedules/"+url.PathEscape(id)+"/trigger", nil, &e)
}

// LogRecord is one record of an execution's log.
type LogRecord struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// Event is one event of an execution's event stream: Type "status" (with
// Execution), "log" (with Record), "end" (with the finished Execution) or,
// without following, "replayed" (with the Execution as it stands).
type Event struct {
	Type      string
	Record    *LogRecord
	Execution *Execution
}

// Follow reads an execution's event stream from log record after+1 and
// calls fn with each event until the end event, whose execution it
// returns. With live false it stops after replaying what is logged now
// and returns the execution as it stands.
//
// A stream that breaks before its end (the service dropped a slow
// reader, restarted, or the network failed) is opened again from the
// last record received, after a pause, so fn sees each record once; a
// second status event may come with it. Follow gives up after
// FollowRetries attempts in a row that received nothing.
func (c *Client) Follow(ctx context.Context, id string, after int, live bool, fn func(Event) error) (*Execution, error) {
	idle := 0
	for {
		last := after
		end, err := c.follow(ctx, id, &last, live, fn)
		var apiErr *Error
		var cbErr callbackError
		switch {
		case errors.As(err, &cbErr):
			return nil, cbErr.err
		case end != nil || ctx.Err() != nil || errors.As(err, &apiErr):
			return end, err
		case last > after:
			idle = 0
		default:
			idle++
		}
		if idle >= FollowRetries {
			return nil, err
		}
		after = last
		t := time.NewTimer(time.Duration(idle+1) * 500 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// FollowRetries is how many times in a row Follow opens a broken stream
// again without receiving anything before it gives up.
const FollowRetries = 5

// callbackError is an error of Follow's fn, which ends Follow at once.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// follow reads one event stream; *last is the number of the last record
// received.
func (c *Client) follow(ctx context.Context, id string, last *int, live bool, fn func(Event) error) (*Execution, error) {
	q := url.Values{}
	if *last > 0 {
		q.Set("after", strconv.Itoa(*last))
	}
	if !live {
		q.Set("follow", "false")
	}
	path := "/v1/executions/" + url.PathEscape(id) + "/events?" + q.Encode()
	resp, err := c.send(ctx, "GET", path, nil, "text/event-stream")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := check(resp); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(resp.Body)
	// An event holds one log record (a line of output, cut at 64 KiB,
	// escaped) or an execution (with up to 16 MiB of each stream).
	sc.Buffer(make([]byte, 64<<10), 128<<20)
	var event string
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if event == "" {
				continue
			}
			ev := Event{Type: event}
			switch event {
			case "log":
				ev.Record = new(LogRecord)
				if err := json.Unmarshal(data, ev.Record); err != nil {
					return nil, fmt.Errorf("corral service: bad log event: %w", err)
				}
			case "status", "end", "replayed":
				ev.Execution = new(Execution)
				if err := json.Unmarshal(data, ev.Execution); err != nil {
					return nil, fmt.Errorf("corral service: bad %s event: %w", event, err)
				}
			}
			if fn != nil {
				if err := fn(ev); err != nil {
					return nil, callbackError{err}
				}
			}
			if ev.Record != nil {
				*last = ev.Record.Seq
			}
			if event == "end" || event == "replayed" {
				return ev.Execution, nil
			}
			event, data = "", nil
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(line[7:])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[6:]...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("corral service: event stream ended before the execution did (service restarted?)")
}
