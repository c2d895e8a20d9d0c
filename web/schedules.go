package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service"
)

// schedulePage is the number of schedules per page of the list.
const schedulePage = 100

// scheduleForm is the form to create a schedule, as typed.
type scheduleForm struct {
	Agent, Cron, TimeZone, Input, Timeout, Missed string
	Enabled                                       bool
	Errors                                        map[string]string
	Error                                         string
}

type schedulesData struct {
	Schedules []*corral.Schedule
	// Next is the cursor of the next page, "" on the last; Paged says
	// this is not the first.
	Next   string
	Paged  bool
	Agents []*corral.Agent
	Form   *scheduleForm
	CSRF   string
}

func (u *UI) schedulesPage(w http.ResponseWriter, r *http.Request, p *page) {
	f := &scheduleForm{Enabled: true, Missed: string(corral.MissedSkip), Agent: r.URL.Query().Get("agent")}
	switch r.URL.Query().Get("done") {
	case "created":
		p.Notice = "Schedule created."
	case "enabled":
		p.Notice = "Schedule enabled."
	case "disabled":
		p.Notice = "Schedule disabled: it will not fire until enabled again."
	case "deleted":
		p.Notice = "Schedule deleted."
	}
	u.renderSchedules(w, r, p, http.StatusOK, f)
}

func (u *UI) renderSchedules(w http.ResponseWriter, r *http.Request, p *page, status int, f *scheduleForm) {
	cursor := r.URL.Query().Get("cursor")
	list, next, err := u.svc.Schedules(r.Context(), service.ScheduleFilter{Cursor: cursor, Limit: schedulePage})
	if errors.Is(err, service.ErrInvalid) && cursor != "" {
		p.Notice = "That page of the list no longer exists; showing the first."
		cursor = ""
		list, next, err = u.svc.Schedules(r.Context(), service.ScheduleFilter{Limit: schedulePage})
	}
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	agents, err := u.svc.Agents(r.Context())
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	p.Title, p.Nav = "Schedules", "schedules"
	p.Data = schedulesData{Schedules: list, Next: next, Paged: cursor != "", Agents: agents, Form: f, CSRF: p.CSRF}
	u.render(w, r, status, "schedules", p)
}

func (u *UI) createSchedule(w http.ResponseWriter, r *http.Request, p *page) {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := &scheduleForm{Agent: v("agent"), Cron: v("cron"), TimeZone: v("time_zone"), Input: strings.ReplaceAll(r.PostFormValue("input"), "\r\n", "\n"),
		Timeout: v("timeout"), Missed: v("missed"), Enabled: r.PostFormValue("enabled") != "", Errors: map[string]string{}}
	to, err := parseDur(f.Timeout)
	if err != nil {
		f.Errors["timeout"] = err.Error()
	}
	if f.Agent == "" {
		f.Errors["agent"] = "Choose an agent."
	}
	if f.Cron == "" {
		f.Errors["cron"] = "Enter when it fires: five cron fields such as 0 9 * * 1-5, or @hourly, @daily, @every 90s."
	}
	if strings.TrimSpace(f.Input) == "" {
		f.Errors["input"] = "Enter the command line (shell agents) or the prompt (headless agents) it runs."
	}
	if len(f.Errors) == 0 {
		if _, err := u.svc.Agent(r.Context(), f.Agent); err != nil {
			f.Errors["agent"] = "There is no agent " + f.Agent + "."
		}
	}
	if len(f.Errors) == 0 {
		sc := &corral.Schedule{Agent: f.Agent, Cron: f.Cron, TimeZone: f.TimeZone, Input: f.Input, Timeout: to, Enabled: f.Enabled, Missed: corral.MissedPolicy(f.Missed)}
		_, err := u.svc.CreateSchedule(r.Context(), sc)
		if err == nil {
			seeOther(w, r, "/schedules?done=created")
			return
		}
		if !errors.Is(err, service.ErrInvalid) {
			u.fail(w, r, p, err)
			return
		}
		msg := capitalize(strings.TrimPrefix(err.Error(), service.ErrInvalid.Error()+": ")) + "."
		switch low := strings.ToLower(msg); {
		case strings.Contains(low, "time zone") || strings.Contains(low, "location"):
			f.Errors["time_zone"] = msg
		case strings.Contains(low, "input"):
			f.Errors["input"] = msg
		case strings.Contains(low, "missed"):
			f.Errors["missed"] = msg
		case strings.Contains(low, "timeout"):
			f.Errors["timeout"] = msg
		default:
			f.Errors["cron"] = msg
		}
	}
	u.renderSchedules(w, r, p, http.StatusUnprocessableEntity, f)
}

func (u *UI) enableSchedule(on bool) pageHandler {
	return func(w http.ResponseWriter, r *http.Request, p *page) {
		sc, err := u.svc.Schedule(r.Context(), r.PathValue("id"))
		if err != nil {
			u.fail(w, r, p, err)
			return
		}
		sc.Enabled = on
		if _, err := u.svc.UpdateSchedule(r.Context(), sc); err != nil {
			u.fail(w, r, p, err)
			return
		}
		done := "disabled"
		if on {
			done = "enabled"
		}
		seeOther(w, r, "/schedules?done="+done)
	}
}

// triggerSchedule runs a schedule's task now and shows the execution.
func (u *UI) triggerSchedule(w http.ResponseWriter, r *http.Request, p *page) {
	e, err := u.svc.TriggerSchedule(r.Context(), r.PathValue("id"))
	var rej *service.RejectedError
	if err != nil && !errors.As(err, &rej) {
		u.fail(w, r, p, err)
		return
	}
	seeOther(w, r, "/executions/"+url.PathEscape(e.ID))
}

func (u *UI) deleteSchedule(w http.ResponseWriter, r *http.Request, p *page) {
	if err := u.svc.DeleteSchedule(r.Context(), r.PathValue("id")); err != nil {
		u.fail(w, r, p, err)
		return
	}
	seeOther(w, r, "/schedules?done=deleted")
}
