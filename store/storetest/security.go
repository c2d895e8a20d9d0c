package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// testSessionRevocation: a revoked session stays revoked through another
// read, an unknown one is not, and a revocation past its expiry is
// forgotten when the next one is recorded.
func testSessionRevocation(t *testing.T, s store.Store) {
	now := time.Now().UTC()
	if got, err := s.SessionRevoked(ctx, "s1"); err != nil || got {
		t.Fatalf("unknown session: revoked %v, err %v", got, err)
	}
	if err := s.RevokeSession(ctx, "s1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeSession(ctx, "s1", now.Add(time.Hour)); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	if got, err := s.SessionRevoked(ctx, "s1"); err != nil || !got {
		t.Fatalf("revoked session: revoked %v, err %v", got, err)
	}
	if err := s.RevokeSession(ctx, "old", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeSession(ctx, "s2", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SessionRevoked(ctx, "old"); got {
		t.Fatal("a revocation past its expiry was kept")
	}
	for _, bad := range []string{"", string(make([]byte, 129))} {
		if err := s.RevokeSession(ctx, bad, now); err == nil {
			t.Fatalf("a session id of %d bytes was accepted", len(bad))
		}
	}
}

// testSharedRevocation: a logout through one worker holds on the others.
func testSharedRevocation(t *testing.T, ss []store.Store) {
	if err := ss[0].RevokeSession(ctx, "fleet", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, s := range ss {
		if got, err := s.SessionRevoked(ctx, "fleet"); err != nil || !got {
			t.Fatalf("worker %d: revoked %v, err %v", i, got, err)
		}
	}
}

// testAgentConfinementKept: who a task runs as, what it is passed and its
// sandbox survive the store, and the names of env are not stored.
func testAgentConfinementKept(t *testing.T, s store.Store) {
	sb := corral.Sandbox{Mode: corral.SandboxWorkspace, Writable: []string{"/srv/cache"}, DenyRead: []string{"/etc/secret"}, AllowHosts: []string{"api.anthropic.com:443"}}
	a := &corral.Agent{Name: "confined", Kind: corral.KindShell, RunAs: "nobody", PassEnv: []string{"LANG", "ANTHROPIC_API_KEY", "LANG"},
		Env: map[string]string{"K": "v"}, EnvNames: []string{"ignored"}, Sandbox: sb, CreatedAt: time.Now().UTC()}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAgent(ctx, "confined")
	if err != nil {
		t.Fatal(err)
	}
	if got.RunAs != "nobody" || !reflect.DeepEqual(got.PassEnv, []string{"ANTHROPIC_API_KEY", "LANG"}) || !reflect.DeepEqual(got.Sandbox, sb) {
		t.Fatalf("kept run_as %q, pass_env %q, sandbox %+v", got.RunAs, got.PassEnv, got.Sandbox)
	}
	if got.Env["K"] != "v" || got.EnvNames != nil {
		t.Fatalf("env %v, env names %v: want the values kept and no names stored", got.Env, got.EnvNames)
	}
}
