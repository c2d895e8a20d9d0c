package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store"
)

// recentRuns is how many finished runs the success rate looks at.
const recentRuns = 20

// agentRow is one agent on the agents page.
type agentRow struct {
	*corral.Agent
	Running, Queued int
	// Succeeded of Finished recent runs (succeeded, failed, interrupted;
	// cancelled and rejected runs say nothing of the agent).
	Succeeded, Finished int
	NextFire            *time.Time
	Schedules           int
}

// Rate is the recent success rate, from 0 to 1.
func (a agentRow) Rate() float64 {
	if a.Finished == 0 {
		return 0
	}
	return float64(a.Succeeded) / float64(a.Finished)
}

// Full reports whether every slot is taken.
func (a agentRow) Full() bool { return a.Running >= a.MaxParallelTasks }

type agentsData struct {
	Agents []agentRow
	Chart  *chart
}

// agentRows reads the agents and their activity: counts the database
// keeps, never an execution record or a schedule.
func (u *UI) agentRows(ctx context.Context) ([]agentRow, error) {
	agents, err := u.svc.Agents(ctx)
	if err != nil {
		return nil, err
	}
	acts, err := u.svc.Activity(ctx, recentRuns)
	if err != nil {
		return nil, err
	}
	by := make(map[string]*store.AgentActivity, len(acts))
	for i := range acts {
		by[acts[i].Agent] = &acts[i]
	}
	rows := make([]agentRow, 0, len(agents))
	for _, a := range agents {
		row := agentRow{Agent: a}
		if act := by[a.Name]; act != nil {
			row.Running, row.Queued = act.Running, act.Queued
			row.Succeeded, row.Finished = act.Succeeded, act.Finished
			row.Schedules, row.NextFire = act.Schedules, act.NextFire
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (u *UI) agentsPage(w http.ResponseWriter, r *http.Request, p *page) {
	rows, err := u.agentRows(r.Context())
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	now := u.now()
	from := now.Add(-24 * time.Hour)
	execs, err := u.executionsSince(r.Context(), service.ExecutionFilter{Since: from})
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	p.Title, p.Nav = "Agents", "agents"
	p.Data = agentsData{Agents: rows, Chart: buildChart(execs, from, now, now, "the last 24 hours")}
	u.render(w, r, http.StatusOK, "agents", p)
}

// liveAgents streams the agents table as it changes. Every dashboard
// shares one table (agentsLive).
func (u *UI) liveAgents(w http.ResponseWriter, r *http.Request, p *page) {
	u.live(w, r, u.agentsLive.fragment)
}

// fleetRefresh is how often a live view reads the database although
// this worker changed nothing: other workers of a fleet may have.
const fleetRefresh = 5 * time.Second

// sharedAgents is the agents table that every live dashboard shows,
// computed once for all of them: read again only when this worker
// changed something (service.Changes) or fleetRefresh passed, at most
// once per Config.LivePoll; rendered again at most once a second (its
// relative times move).
type sharedAgents struct {
	u *UI

	mu       sync.Mutex
	seq      uint64
	read     time.Time
	rows     []agentRow
	html     []byte
	rendered time.Time
}

func (l *sharedAgents) fragment(ctx context.Context) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	seq, _ := l.u.svc.Changes()
	stale := l.rows == nil || now.Sub(l.read) >= fleetRefresh || seq != l.seq && now.Sub(l.read) >= l.u.cfg.LivePoll
	if stale {
		rows, err := l.u.agentRows(ctx)
		if err != nil {
			return nil, err
		}
		l.rows, l.seq, l.read, l.html = rows, seq, now, nil
	}
	if l.html == nil || now.Sub(l.rendered) >= time.Second {
		html, err := l.u.renderFragment("agent_rows", l.rows)
		if err != nil {
			return nil, err
		}
		l.html, l.rendered = html, now
	}
	return l.html, nil
}

// agentForm is the agent form's fields as typed, and what is wrong with
// them. Values holds the settings of corral.AgentFields() by their keys
// (the inputs' names); the others have inputs of their own. The values of
// the agent's env are never shown: EnvNames lists what is set, Env holds
// only the lines typed to set or replace variables, and EnvRemove the
// names ticked for removal.
type agentForm struct {
	Editing       bool
	Name, Command string
	Values        map[string]string
	Env           string
	EnvNames      []string
	EnvRemove     map[string]bool
	Sandbox       sandboxForm
	Spend         []windowView
	Webhooks      []corral.Webhook // shown, not edited: the API and the CLI set them
	Errors        map[string]string
	Error         string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// newAgentForm is the form of a new agent, with its defaults shown.
func newAgentForm() *agentForm {
	return &agentForm{Values: map[string]string{"kind": "shell", "shell": "bash", "overflow": "reject"}, Sandbox: sandboxFormOf(corral.Sandbox{})}
}

func formOf(a *corral.Agent) *agentForm {
	f := &agentForm{Editing: true, Name: a.Name, Command: strings.Join(a.Command, "\n"), Values: map[string]string{},
		Sandbox: sandboxFormOf(a.Sandbox), CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	for i := range corral.AgentFields() {
		fld := &corral.AgentFields()[i]
		f.Values[fld.Key] = fld.Text(a)
	}
	f.Values["pass_env"] = strings.Join(a.PassEnv, "\n")
	for _, w := range a.Webhooks {
		w.Secret = ""
		f.Webhooks = append(f.Webhooks, w)
	}
	for k := range a.Env {
		f.EnvNames = append(f.EnvNames, k)
	}
	sort.Strings(f.EnvNames)
	return f
}

func readAgentForm(r *http.Request) *agentForm {
	lines := func(k string) string { return strings.TrimSpace(strings.ReplaceAll(r.PostFormValue(k), "\r\n", "\n")) }
	f := &agentForm{Name: strings.TrimSpace(r.PostFormValue("name")), Command: lines("command"), Values: map[string]string{},
		Env: lines("env"), EnvRemove: map[string]bool{}, Sandbox: readSandboxForm(r)}
	for _, fld := range corral.AgentFields() {
		f.Values[fld.Key] = lines(fld.Key)
	}
	for _, name := range r.PostForm["env_remove"] {
		f.EnvRemove[name] = true
	}
	return f
}

// agent turns the form into an agent, noting what is wrong field by
// field. env is the agent's env so far (nil for a new agent): the form's
// lines set or replace variables in it, its ticked names are removed.
func (f *agentForm) agent(env map[string]string) (*corral.Agent, bool) {
	f.Errors = map[string]string{}
	a := &corral.Agent{Name: f.Name}
	if f.Name == "" {
		f.Errors["name"] = "Give the agent a name: letters, digits, '-', '_' or '.'."
	} else if err := corral.ValidName(f.Name); err != nil {
		f.Errors["name"] = "The name " + err.Error() + "."
	}
	for i := range corral.AgentFields() {
		fld := &corral.AgentFields()[i]
		if err := fld.Set(a, f.Values[fld.Key]); err != nil {
			f.Errors[fld.Key] = capitalize(strings.TrimPrefix(err.Error(), fld.Key+": ")) + "."
		}
	}
	kind := f.Values["kind"]
	if kind != "shell" && kind != "headless" {
		f.Errors["kind"] = "Choose shell or headless."
	}
	for _, line := range strings.Split(f.Command, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			a.Command = append(a.Command, line)
		}
	}
	if kind == "headless" && len(a.Command) == 0 {
		f.Errors["command"] = "A headless agent needs its command, one argument per line; {{prompt}} marks where the task goes, after a line --."
	}
	if kind == "shell" {
		a.Command = nil
	} else {
		a.Shell = ""
	}
	f.env(a, env)
	if sb, err := f.Sandbox.sandbox(); err != nil {
		f.Errors["sandbox"] = capitalize(err.Error()) + "."
	} else {
		a.Sandbox = sb
	}
	return a, len(f.Errors) == 0
}

// env sets a's env: env, less the names ticked for removal, with the
// form's NAME=value lines.
func (f *agentForm) env(a *corral.Agent, env map[string]string) {
	a.Env = map[string]string{}
	for k, v := range env {
		if !f.EnvRemove[k] {
			a.Env[k] = v
		}
	}
	for i, line := range strings.Split(f.Env, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			f.Errors["env"] = "Line " + itoa(i+1) + " is not NAME=value."
			break
		}
		a.Env[strings.TrimSpace(k)] = val
	}
	if len(a.Env) == 0 {
		a.Env = nil
	}
}

// serviceError files an error of the service under the field it is
// about, or as the form's error. It reports false for an error that is
// none of the form's doing (the caller answers it as an internal error).
func (f *agentForm) serviceError(err error) bool {
	msg := strings.TrimPrefix(err.Error(), service.ErrInvalid.Error()+": ")
	switch {
	case errors.Is(err, service.ErrExists):
		f.Errors["name"] = "An agent named " + f.Name + " exists already: pick another name, or edit that one."
		return true
	case errors.Is(err, service.ErrNotFound):
		f.Error = "This agent no longer exists."
		return true
	case !errors.Is(err, service.ErrInvalid):
		return false
	}
	for _, fld := range corral.AgentFields() {
		if strings.HasPrefix(msg, fld.Key) {
			f.Errors[fld.Key] = capitalize(msg) + "."
			return true
		}
	}
	for _, m := range []struct{ prefix, field string }{
		{"agent name", "name"}, {"headless agent", "command"}, {"agent kind", "kind"}, {"unknown agent kind", "kind"},
		{"unknown overflow", "overflow"}, {"env", "env"}, {"command", "command"}, {"sandbox", "sandbox"},
	} {
		if strings.HasPrefix(msg, m.prefix) {
			f.Errors[m.field] = capitalize(msg) + "."
			return true
		}
	}
	f.Error = capitalize(msg) + "."
	return true
}

func (u *UI) newAgentPage(w http.ResponseWriter, r *http.Request, p *page) {
	p.Title, p.Nav = "New agent", "agents"
	p.Data = newAgentForm()
	u.render(w, r, http.StatusOK, "agent_form", p)
}

func (u *UI) editAgentPage(w http.ResponseWriter, r *http.Request, p *page) {
	a, err := u.svc.Agent(r.Context(), r.PathValue("name"))
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	f := formOf(a)
	f.Spend = u.spendOf(r.Context(), a)
	p.Title, p.Nav, p.Data = "Agent "+a.Name, "agents", f
	if r.URL.Query().Get("saved") != "" {
		p.Notice = "Saved."
	}
	u.render(w, r, http.StatusOK, "agent_form", p)
}

// windowView is a budget window as the agent page shows it: what is
// used, and the runs that spent it, costliest first.
type windowView struct {
	corral.WindowSpend
	Percent float64
	Runs    []*corral.Execution
}

// spendOf reads a's budget windows and the runs of each.
func (u *UI) spendOf(ctx context.Context, a *corral.Agent) []windowView {
	spends, err := u.svc.Spend(ctx, a.Name)
	if err != nil {
		return nil
	}
	var out []windowView
	for _, w := range spends {
		v := windowView{WindowSpend: w, Percent: min(100*w.Used(), 100)}
		runs, _, _ := u.svc.Executions(ctx, service.ExecutionFilter{Agent: a.Name, Since: w.Start, Limit: 200})
		for _, e := range runs {
			if e.CostUSD > 0 {
				v.Runs = append(v.Runs, e)
			}
		}
		sort.Slice(v.Runs, func(i, j int) bool { return v.Runs[i].CostUSD > v.Runs[j].CostUSD })
		v.Runs = v.Runs[:min(len(v.Runs), 10)]
		out = append(out, v)
	}
	return out
}

func (u *UI) createAgent(w http.ResponseWriter, r *http.Request, p *page) {
	f := readAgentForm(r)
	p.Title, p.Nav, p.Data = "New agent", "agents", f
	a, ok := f.agent(nil)
	if ok {
		_, err := u.svc.CreateAgent(r.Context(), a)
		if err == nil {
			seeOther(w, r, "/agents/"+url.PathEscape(a.Name)+"?saved=1")
			return
		}
		if !f.serviceError(err) {
			u.fail(w, r, p, err)
			return
		}
	}
	u.render(w, r, http.StatusUnprocessableEntity, "agent_form", p)
}

func (u *UI) updateAgent(w http.ResponseWriter, r *http.Request, p *page) {
	f := readAgentForm(r)
	f.Editing = true
	f.Name = r.PathValue("name")
	p.Title, p.Nav, p.Data = "Agent "+f.Name, "agents", f
	cur, err := u.svc.Agent(r.Context(), f.Name)
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	f.EnvNames, f.Webhooks = formOf(cur).EnvNames, formOf(cur).Webhooks
	a, ok := f.agent(cur.Env)
	a.Webhooks = cur.Webhooks // set through the API and the CLI, kept here
	if ok {
		_, err := u.svc.UpdateAgent(r.Context(), a)
		if err == nil {
			seeOther(w, r, "/agents/"+url.PathEscape(a.Name)+"?saved=1")
			return
		}
		if !f.serviceError(err) {
			u.fail(w, r, p, err)
			return
		}
	}
	u.render(w, r, http.StatusUnprocessableEntity, "agent_form", p)
}

func (u *UI) deleteAgent(w http.ResponseWriter, r *http.Request, p *page) {
	name := r.PathValue("name")
	err := u.svc.DeleteAgent(r.Context(), name)
	switch {
	case err == nil:
		seeOther(w, r, "/")
	case errors.Is(err, service.ErrBusy):
		a, gerr := u.svc.Agent(r.Context(), name)
		if gerr != nil {
			u.fail(w, r, p, gerr)
			return
		}
		f := formOf(a)
		f.Error = "Agent " + name + " still has queued or running tasks. Cancel them or let them finish, then delete it."
		p.Title, p.Nav, p.Data = "Agent "+name, "agents", f
		u.render(w, r, http.StatusConflict, "agent_form", p)
	default:
		u.fail(w, r, p, err)
	}
}

// taskForm is the form to submit a task.
type taskForm struct {
	Agents                []*corral.Agent
	Agent, Input, Timeout string
	Errors                map[string]string
}

func (u *UI) taskPage(w http.ResponseWriter, r *http.Request, p *page) {
	agents, err := u.svc.Agents(r.Context())
	if err != nil {
		u.fail(w, r, p, err)
		return
	}
	p.Title, p.Nav = "Run a task", "task"
	p.Data = &taskForm{Agents: agents, Agent: r.URL.Query().Get("agent")}
	u.render(w, r, http.StatusOK, "task", p)
}

// submitTask submits a task and shows its execution, a rejected one too
// (its page says why).
func (u *UI) submitTask(w http.ResponseWriter, r *http.Request, p *page) {
	f := &taskForm{Agent: r.PostFormValue("agent"), Input: r.PostFormValue("input"), Timeout: strings.TrimSpace(r.PostFormValue("timeout")), Errors: map[string]string{}}
	f.Input = strings.ReplaceAll(f.Input, "\r\n", "\n")
	to, err := parseDur(f.Timeout)
	if err != nil {
		f.Errors["timeout"] = err.Error()
	}
	if strings.TrimSpace(f.Input) == "" {
		f.Errors["input"] = "Enter the command line (shell agents) or the prompt (headless agents)."
	}
	if f.Agent == "" {
		f.Errors["agent"] = "Choose an agent."
	}
	if len(f.Errors) == 0 {
		e, err := u.svc.Submit(r.Context(), service.Task{Agent: f.Agent, Input: f.Input, Timeout: to})
		var rej *service.RejectedError
		switch {
		case err == nil || errors.As(err, &rej):
			seeOther(w, r, "/executions/"+url.PathEscape(e.ID))
			return
		case errors.Is(err, service.ErrNotFound):
			f.Errors["agent"] = "There is no agent " + f.Agent + "."
		case errors.Is(err, service.ErrInvalid):
			f.Errors["input"] = capitalize(strings.TrimPrefix(err.Error(), service.ErrInvalid.Error()+": ")) + "."
		default:
			u.fail(w, r, p, err)
			return
		}
	}
	f.Agents, _ = u.svc.Agents(r.Context())
	p.Title, p.Nav, p.Data = "Run a task", "task", f
	u.render(w, r, http.StatusUnprocessableEntity, "task", p)
}
