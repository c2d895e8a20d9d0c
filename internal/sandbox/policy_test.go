package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corralrun/corral"
)

func TestNewPolicyResolvesPaths(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	ws, extra := filepath.Join(dir, "ws"), filepath.Join(dir, "extra")
	os.Mkdir(ws, 0o755)
	os.Mkdir(extra, 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Skip("SKIP: needs symbolic links")
	}
	p, err := NewPolicy(corral.Sandbox{Mode: corral.SandboxWorkspace, Writable: []string{extra, ws}, DenyRead: []string{filepath.Join(dir, "missing")}}, link)
	if err != nil {
		t.Fatal(err)
	}
	if p.Workdir != ws {
		t.Errorf("Workdir %q, want the link resolved to %q", p.Workdir, ws)
	}
	if got := p.WritableRoots(); !slices.Equal(got, []string{ws, extra}) {
		t.Errorf("WritableRoots %q, want %q once each", got, []string{ws, extra})
	}
	if !slices.Equal(p.DenyRead, []string{filepath.Join(dir, "missing")}) {
		t.Errorf("DenyRead %q: a missing path is kept as given", p.DenyRead)
	}
	p.Mode = corral.SandboxReadOnly
	if got := p.WritableRoots(); len(got) != 0 {
		t.Errorf("read-only mode has writable roots %q", got)
	}
	if _, err := NewPolicy(corral.Sandbox{Mode: corral.SandboxWorkspace, Writable: []string{filepath.Join(dir, "nope")}}, ws); err == nil {
		t.Error("a missing writable root was accepted")
	}
	if _, err := NewPolicy(corral.Sandbox{}, ws); err == nil {
		t.Error("a policy without a sandbox mode was accepted")
	}
}

func TestValidateRefusesWhatNoSandboxHonours(t *testing.T) {
	ok := Policy{Mode: corral.SandboxWorkspace, Workdir: "/home/u/ws", TmpDir: "/tmp/corral-x"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a sound policy: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(p *Policy)
		want string
	}{
		{"no mode", func(p *Policy) { p.Mode = "" }, "mode"},
		{"relative workdir", func(p *Policy) { p.Workdir = "ws" }, "not absolute"},
		{"no private /tmp", func(p *Policy) { p.TmpDir = "" }, "TmpDir"},
		{"root as workdir", func(p *Policy) { p.Workdir = "/" }, "nothing read-only"},
		{"/tmp writable", func(p *Policy) { p.Writable = []string{"/tmp"} }, "private /tmp"},
		{"/proc writable", func(p *Policy) { p.Writable = []string{"/proc/sys"} }, "its own /proc"},
		{"unclean path", func(p *Policy) { p.DenyRead = []string{"/home/u/../x"} }, "clean"},
		{"deny /", func(p *Policy) { p.DenyRead = []string{"/"} }, "denying /"},
		{"proxy with host network", func(p *Policy) { p.Network = corral.NetworkHost; p.ProxyPort = 3128 }, "network host"},
		{"bad port", func(p *Policy) { p.ProxyPort = 70000 }, "out of range"},
	} {
		p := ok
		c.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		name string
		edit func(p *Policy)
	}{
		{"a writable directory below /dev/shm", func(p *Policy) { p.Writable = []string{"/dev/shm/x"} }},
		{"the host's /dev/shm itself", func(p *Policy) { p.Private = []string{"/dev/shm"} }},
		{"a private directory elsewhere in /dev", func(p *Policy) { p.Private = []string{"/dev/mqueue/x"} }},
	} {
		p := ok
		c.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "its own /dev") {
			t.Errorf("%s: %v, want an error about the sandbox's own /dev", c.name, err)
		}
	}
	shm := ok
	shm.Private = []string{"/dev/shm/corral-session-x"}
	if err := shm.Validate(); err != nil {
		t.Errorf("corral's private state below /dev/shm: %v", err)
	}
	under := ok
	under.Workdir = "/tmp/job/ws"
	if err := under.Validate(); err != nil {
		t.Errorf("a workspace under /tmp: %v", err)
	}
}
