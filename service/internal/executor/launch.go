package executor

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/proc"
)

// Policy is what a worker lets its runs see of it, and who they run as.
// Every run starts from a clean environment; nothing of the service's own
// environment reaches it but what the Policy and the agent name.
type Policy struct {
	// RunAs is the user runs are started as when their agent names none
	// (corral serve --run-as). When it is set, no run is started as root
	// or as the service's own user, whatever an agent asks. Empty means
	// the service's own user.
	RunAs string
	// PassEnv names variables of the service's environment every run
	// receives (corral serve --pass-env).
	PassEnv []string
	// Secrets are values no variable passed on may hold (the API token,
	// the database URL): a run whose agent would pass one on does not
	// start.
	Secrets []string
	// DataDir is the service's data directory. No run may read it: a
	// sandboxed run has it denied, a guarded one does not see it.
	DataDir string
	// Prices prices headless runs whose agent reports no cost; nil means
	// headless.DefaultPrices.
	Prices *headless.Prices
	// Hide lists further files and directories no run may read, as
	// DataDir.
	Hide []string
	// Guard guards every run (proc.Guard) hiding DataDir and Hide; a
	// sandboxed run's sandbox does the guard's work. Unguarded says why
	// runs are not guarded when Guard is false; each outcome records it.
	Guard     bool
	Unguarded string
	// LookupEnv reads the service's environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// defaultPath is the PATH of runs when the service has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// launch is how one run is started: as whom, where, with what.
type launch struct {
	user    string           // the user's name, for the record
	cred    *proc.Credential // nil: the service's own user
	dir     string
	env     []string
	sandbox corral.Sandbox
	guard   *proc.Guard // nil: unguarded
	// unguarded says why guard is nil.
	unguarded string
}

// prepare works out how j starts. The error, which says what to change,
// means it must not start.
func (p *Policy) prepare(j *Job) (*launch, error) {
	if p == nil {
		p = &Policy{}
	}
	a := j.Agent
	u, cred, err := p.account(a)
	if err != nil {
		return nil, err
	}
	l := &launch{user: u.Username, cred: cred, dir: a.Workdir, sandbox: a.Sandbox}
	if l.dir == "" && cred != nil {
		// The service's own directory may be closed to another user.
		l.dir = "/"
		if fi, err := os.Stat(u.HomeDir); err == nil && fi.IsDir() {
			l.dir = u.HomeDir
		}
	}
	if l.env, err = p.environment(j, u); err != nil {
		return nil, err
	}
	hidden := p.hidden()
	if l.sandbox.Enabled() {
		deny := slices.Clone(l.sandbox.DenyRead)
		for _, h := range hidden {
			if !slices.Contains(deny, h) {
				deny = append(deny, h)
			}
		}
		l.sandbox.DenyRead = deny
	}
	if p.Guard {
		l.guard = &proc.Guard{Hide: hidden}
	} else {
		l.unguarded = p.Unguarded
	}
	return l, nil
}

// hidden returns what no run may read: the data directory and Hide,
// absolute.
func (p *Policy) hidden() []string {
	var out []string
	for _, h := range append([]string{p.DataDir}, p.Hide...) {
		if h == "" {
			continue
		}
		if abs, err := filepath.Abs(h); err == nil && !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out
}

// guardReport is what the outcome says of the run's guard: proc's report,
// or why it was not guarded.
func (l *launch) guardReport(r *corral.GuardReport) *corral.GuardReport {
	if l.guard == nil {
		return &corral.GuardReport{Unguarded: l.unguarded}
	}
	return r
}

// account resolves the user a's runs start as, and the credential that
// switches to it (nil when it is the service's own user).
func (p *Policy) account(a *corral.Agent) (*user.User, *proc.Credential, error) {
	self, err := user.Current()
	if err != nil {
		self = &user.User{Uid: strconv.Itoa(os.Getuid()), Gid: strconv.Itoa(os.Getgid()), Username: strconv.Itoa(os.Getuid()), HomeDir: os.Getenv("HOME")}
	}
	name, whose := a.RunAs, "agent "+a.Name+"'s run_as"
	if name == "" {
		name, whose = p.RunAs, "corral serve --run-as"
	}
	if name == "" {
		return self, nil, nil
	}
	u, err := lookupUser(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", whose, err)
	}
	if p.RunAs != "" && (u.Uid == "0" || u.Uid == self.Uid) {
		return nil, nil, fmt.Errorf("%s: user %s (uid %s) could read the service's data: this worker (started with --run-as) runs no task as root or as itself; name an unprivileged user", whose, u.Username, u.Uid)
	}
	if u.Uid == self.Uid {
		return u, nil, nil
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, nil, fmt.Errorf("%s: user %s has no numeric uid and gid (%s:%s); this platform cannot switch to it", whose, name, u.Uid, u.Gid)
	}
	cred := &proc.Credential{UID: uint32(uid), GID: uint32(gid), Groups: []uint32{}}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil && g != gid {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return u, cred, nil
}

// lookupUser finds a user by name, or by uid when name is a number.
func lookupUser(name string) (*user.User, error) {
	u, err := user.Lookup(name)
	if err == nil {
		return u, nil
	}
	if _, nerr := strconv.ParseUint(name, 10, 32); nerr == nil {
		if u, err := user.LookupId(name); err == nil {
			return u, nil
		}
	}
	return nil, fmt.Errorf("no user %q on this machine (create it, or name another): %w", name, err)
}

// environment builds a run's environment, later entries winning: a
// minimal base (PATH, HOME, USER, LOGNAME, LANG, TZ, and on Windows what
// programs need to start), the variables passed on from the service (the
// worker's --pass-env, then the agent's pass_env), the agent's env, then
// the job's own entries.
func (p *Policy) environment(j *Job, u *user.User) ([]string, error) {
	lookup := p.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	path, ok := lookup("PATH")
	if !ok || path == "" {
		path = defaultPath
	}
	lang, ok := lookup("LANG")
	if !ok || lang == "" {
		lang = "C.UTF-8"
	}
	env := []string{"PATH=" + path, "HOME=" + u.HomeDir, "USER=" + u.Username, "LOGNAME=" + u.Username, "LANG=" + lang}
	if tz, ok := lookup("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	for _, name := range platformBase {
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
		}
	}
	for _, name := range append(slices.Clone(p.PassEnv), j.Agent.PassEnv...) {
		if err := CheckPassEnv(name); err != nil {
			return nil, fmt.Errorf("pass_env: %w", err)
		}
		v, ok := lookup(name)
		if !ok {
			continue // the service does not have it: nothing to pass on
		}
		if i := slices.IndexFunc(p.Secrets, func(s string) bool { return s != "" && strings.Contains(v, s) }); i >= 0 {
			return nil, fmt.Errorf("pass_env: %s holds one of the service's secrets (its token or database URL): it is never passed to tasks; remove it from pass_env or --pass-env", name)
		}
		env = append(env, name+"="+v)
	}
	for k, v := range j.Agent.Env {
		env = append(env, k+"="+v)
	}
	return append(env, j.Env...), nil
}
