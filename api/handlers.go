package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
)

// AgentList is the answer of GET /v1/agents.
type AgentList struct {
	Agents []*corral.Agent `json:"agents"`
}

// TaskRequest is the body of POST /v1/agents/{name}/tasks.
type TaskRequest struct {
	Input   string          `json:"input"`
	Timeout corral.Duration `json:"timeout,omitempty"`
}

// ExecutionList is the answer of GET /v1/executions: summaries of the
// executions (no output bodies, input and error cut; GET one execution
// for its whole record).
type ExecutionList struct {
	Executions []*corral.Execution `json:"executions"`
	// NextCursor continues the listing (pass it as cursor); "" at the end.
	NextCursor string `json:"next_cursor"`
}

// SlotList is the answer of GET /v1/agents/{name}/slots.
type SlotList struct {
	Agent    string        `json:"agent"`
	Capacity int           `json:"capacity"`
	Used     int           `json:"used"`
	Slots    []corral.Slot `json:"slots"`
}

// ScheduleList is the answer of GET /v1/agents/{name}/schedules and of
// GET /v1/schedules: one page, oldest first.
type ScheduleList struct {
	Schedules []*corral.Schedule `json:"schedules"`
	// NextCursor continues the listing (pass it as cursor); "" at the end.
	NextCursor string `json:"next_cursor"`
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.Agents(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, AgentList{Agents: list})
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) {
	var a corral.Agent
	if err := s.decode(w, r, &a); err != nil {
		s.fail(w, r, err)
		return
	}
	if !a.CreatedAt.IsZero() || !a.UpdatedAt.IsZero() {
		s.fail(w, r, fmt.Errorf("%w: created_at and updated_at are set by the service", service.ErrInvalid))
		return
	}
	got, err := s.svc.CreateAgent(r.Context(), &a)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/agents/"+got.Name)
	writeJSON(w, http.StatusCreated, got)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	a, err := s.svc.Agent(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// merge overlays the JSON object patch onto the JSON of cur and decodes
// the result strictly into out.
func (s *Server) merge(w http.ResponseWriter, r *http.Request, cur, out any, fixed ...string) error {
	patch, err := s.decodePatch(w, r)
	if err != nil {
		return err
	}
	return overlay(patch, cur, out, fixed...)
}

// decodePatch reads a JSON object of fields to change.
func (s *Server) decodePatch(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, error) {
	var patch map[string]json.RawMessage
	if err := s.decode(w, r, &patch); err != nil {
		return nil, err
	}
	if patch == nil {
		return nil, fmt.Errorf("%w: send a JSON object of the fields to change", service.ErrInvalid)
	}
	return patch, nil
}

// overlay sets the fields of patch on the JSON of cur and decodes the
// result strictly into out; fields named in fixed may not change.
func overlay(patch map[string]json.RawMessage, cur, out any, fixed ...string) error {
	base, _ := json.Marshal(cur)
	var m map[string]json.RawMessage
	json.Unmarshal(base, &m)
	for k, v := range patch {
		for _, f := range fixed {
			if k == f && string(v) != string(m[k]) {
				return fmt.Errorf("%w: %s cannot be changed", service.ErrInvalid, k)
			}
		}
		m[k] = v
	}
	merged, _ := json.Marshal(m)
	dec := json.NewDecoder(strings.NewReader(string(merged)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: %v", service.ErrInvalid, err)
	}
	return nil
}

func (s *Server) patchAgent(w http.ResponseWriter, r *http.Request) {
	cur, err := s.svc.Agent(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.mergeAgent(w, r, cur)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	got, err := s.svc.UpdateAgent(r.Context(), a)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, got)
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.DeleteAgent(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	var req TaskRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.svc.Submit(traced(r), service.Task{Agent: r.PathValue("name"), Input: req.Input, Timeout: req.Timeout})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/executions/"+e.ID)
	writeJSON(w, http.StatusAccepted, e)
}

func (s *Server) slots(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	a, err := s.svc.Agent(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sl, err := s.svc.Slots(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SlotList{Agent: name, Capacity: a.MaxParallelTasks, Used: len(sl), Slots: sl})
}

// SpendList is the answer of GET /v1/agents/{name}/spend: what the
// agent's runs spent in each of its budget windows now.
type SpendList struct {
	Agent   string               `json:"agent"`
	Windows []corral.WindowSpend `json:"windows"`
}

func (s *Server) spend(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ws, err := s.svc.Spend(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SpendList{Agent: name, Windows: ws})
}

// DeliveryList is the answer of GET /v1/executions/{id}/webhooks: the
// webhook deliveries of the execution's events, oldest first.
type DeliveryList struct {
	Deliveries []*corral.WebhookDelivery `json:"deliveries"`
}

func (s *Server) deliveries(w http.ResponseWriter, r *http.Request) {
	ds, err := s.svc.Deliveries(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, DeliveryList{Deliveries: ds})
}

func (s *Server) listExecutions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := service.ExecutionFilter{Agent: q.Get("agent"), Cursor: q.Get("cursor")}
	bad := func(format string, args ...any) {
		s.fail(w, r, fmt.Errorf("%w: %s", service.ErrInvalid, fmt.Sprintf(format, args...)))
	}
	if v := q.Get("status"); v != "" {
		for _, p := range strings.Split(v, ",") {
			st, err := corral.ParseStatus(strings.TrimSpace(p))
			if err != nil {
				bad("status: %v", err)
				return
			}
			f.Statuses = append(f.Statuses, st)
		}
	}
	for _, tf := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(tf.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				bad("%s %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", tf.name, v)
				return
			}
			*tf.dst = t
		}
	}
	var ok bool
	if f.Limit, ok = s.pageLimit(w, r); !ok {
		return
	}
	list, next, err := s.svc.Executions(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(w, "executions", list, next)
}

// pageLimit reads the limit parameter of a listing: 0 when absent.
func (s *Server) pageLimit(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > store.MaxPage {
		s.fail(w, r, fmt.Errorf("%w: limit %q: want 1 to %d", service.ErrInvalid, v, store.MaxPage))
		return 0, false
	}
	return n, true
}

func (s *Server) getExecution(w http.ResponseWriter, r *http.Request) {
	e, err := s.svc.Execution(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	e, err := s.svc.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, e)
}

func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	e, err := s.svc.Retry(traced(r), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/executions/"+e.ID)
	writeJSON(w, http.StatusAccepted, e)
}

func (s *Server) agentSchedule(w http.ResponseWriter, r *http.Request) (*corral.Schedule, bool) {
	sc, err := s.svc.Schedule(r.Context(), r.PathValue("id"))
	if err == nil && sc.Agent != r.PathValue("name") {
		err = fmt.Errorf("schedule %s of agent %s: %w", r.PathValue("id"), r.PathValue("name"), store.ErrNotFound)
	}
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return sc, true
}

// listSchedules answers with a page of one agent's schedules, or of
// every agent's under /v1/schedules (narrowed by ?agent=).
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	f := service.ScheduleFilter{Agent: r.PathValue("name"), Cursor: r.URL.Query().Get("cursor")}
	if f.Agent == "" {
		f.Agent = r.URL.Query().Get("agent")
	}
	var ok bool
	if f.Limit, ok = s.pageLimit(w, r); !ok {
		return
	}
	list, next, err := s.svc.Schedules(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(w, "schedules", list, next)
}

// ScheduleRequest is the body of POST /v1/agents/{name}/schedules.
type ScheduleRequest struct {
	Cron     string              `json:"cron"`
	TimeZone string              `json:"time_zone,omitempty"`
	Input    string              `json:"input"`
	Timeout  corral.Duration     `json:"timeout,omitempty"`
	Enabled  *bool               `json:"enabled,omitempty"`
	Missed   corral.MissedPolicy `json:"missed,omitempty"`
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request) {
	var req ScheduleRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	sc := &corral.Schedule{Agent: r.PathValue("name"), Cron: req.Cron, TimeZone: req.TimeZone, Input: req.Input, Timeout: req.Timeout, Enabled: req.Enabled == nil || *req.Enabled, Missed: req.Missed}
	got, err := s.svc.CreateSchedule(r.Context(), sc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/agents/"+got.Agent+"/schedules/"+got.ID)
	writeJSON(w, http.StatusCreated, got)
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) {
	if sc, ok := s.agentSchedule(w, r); ok {
		writeJSON(w, http.StatusOK, sc)
	}
}

func (s *Server) patchSchedule(w http.ResponseWriter, r *http.Request) {
	cur, ok := s.agentSchedule(w, r)
	if !ok {
		return
	}
	var sc corral.Schedule
	if err := s.merge(w, r, cur, &sc, "id", "agent", "created_at", "updated_at", "next_fire_at", "last_fire_at", "last_execution_id"); err != nil {
		s.fail(w, r, err)
		return
	}
	got, err := s.svc.UpdateSchedule(r.Context(), &sc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, got)
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.agentSchedule(w, r); !ok {
		return
	}
	if err := s.svc.DeleteSchedule(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.agentSchedule(w, r); !ok {
		return
	}
	e, err := s.svc.TriggerSchedule(traced(r), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/executions/"+e.ID)
	writeJSON(w, http.StatusAccepted, e)
}
