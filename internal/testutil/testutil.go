// Package testutil holds what corral's tests share: unique tags for the
// processes a test starts, scans that prove those processes are gone,
// descriptor counts, and waiting on a condition with a deadline instead of
// sleeping.
package testutil

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// TagEnv is the environment variable tests put their tag in, so that every
// descendant that keeps its environment carries it.
const TagEnv = "CORRAL_TEST_TAG"

// Tag returns a token unique to this test and this run, safe to put in argv,
// environment variables and file names. It registers a cleanup that kills
// any process still carrying the tag when the test ends, so that a failing
// test leaves nothing running.
func Tag(t testing.TB) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	tag := "corraltest_" + name + "_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if n := KillTagged(tag); n > 0 {
			t.Errorf("cleanup: killed %d leftover processes tagged %s", n, tag)
		}
	})
	return tag
}

// TagEnvVar returns "CORRAL_TEST_TAG=tag", for a Spec's Env.
func TagEnvVar(tag string) string { return TagEnv + "=" + tag }

// WaitFor polls cond until it returns true or timeout passes, and fails the
// test with msg if it never does. Polling starts fast and backs off.
func WaitFor(t testing.TB, timeout time.Duration, msg string, cond func() bool) {
	t.Helper()
	if !Eventually(timeout, cond) {
		t.Fatalf("condition not met within %v: %s", timeout, msg)
	}
}

// Eventually polls cond until it returns true or timeout passes, and reports
// whether it did.
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	d := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(d)
		d = min(d*2, 50*time.Millisecond)
	}
}
