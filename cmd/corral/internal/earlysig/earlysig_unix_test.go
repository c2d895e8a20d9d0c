//go:build unix

package earlysig

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestBeginIsReadyOnlyOnceEverySignalIsCaught: the command of corral run
// waits for Ready, so Ready must not be closed while a signal is still to
// be caught. The catching is held back here; Ready stays open until it is
// let go, and a signal sent once Ready is closed arrives on C.
func TestBeginIsReadyOnlyOnceEverySignalIsCaught(t *testing.T) {
	release := make(chan struct{})
	c := Begin(func(ch chan<- os.Signal, sigs ...os.Signal) {
		<-release
		signal.Notify(ch, sigs...)
	}, syscall.SIGUSR2)
	defer signal.Reset(syscall.SIGUSR2)
	select {
	case <-c.Ready:
		t.Fatal("Ready was closed before the signal was caught")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case <-c.Ready:
	case <-time.After(10 * time.Second):
		t.Fatal("Ready was not closed 10 s after the signal was caught")
	}
	syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	select {
	case s := <-c.C:
		if s != syscall.SIGUSR2 {
			t.Fatalf("caught %v, want SIGUSR2", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGUSR2 was not caught 10 s after Ready")
	}
}

// TestOnlyCorralRunBeginsAsItStarts: the catching is begun for `corral
// run` alone, not for another command, nor where corral is invoked as
// timeout (whose first argument names the command to time).
func TestOnlyCorralRunBeginsAsItStarts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"/usr/local/bin/corral", "run", "--", "true"}, true},
		{[]string{"corral", "run"}, true},
		{[]string{"corral", "timeout", "1", "run"}, false},
		{[]string{"corral", "serve"}, false},
		{[]string{"corral"}, false},
		{[]string{"/usr/bin/timeout", "run", "true"}, false},
	} {
		if got := isRun(tc.args); got != tc.want {
			t.Errorf("isRun(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
	if TakeRun() != nil {
		t.Error("a test binary began catching corral run's signals")
	}
}
