//go:build !linux

package testutil

import (
	"testing"
	"time"
)

// Tagged is only implemented on Linux; elsewhere it finds nothing.
func Tagged(tag string) []struct{} { return nil }

// KillTagged is only implemented on Linux.
func KillTagged(tag string) int { return 0 }

// AssertNoTagged is only implemented on Linux.
func AssertNoTagged(t testing.TB, tag string, timeout time.Duration) {}

// AssertNoZombies is only implemented on Linux.
func AssertNoZombies(t testing.TB, timeout time.Duration) {}

// FDs is only implemented on Linux; it returns -1.
func FDs() int { return -1 }

// UnkeptFDs is only implemented on Linux; it returns -1.
func UnkeptFDs() int { return -1 }

// CheckFDs is only implemented on Linux.
func CheckFDs(t testing.TB) {}

// ReapZombies is only implemented on Linux.
func ReapZombies() {}

// PeakRSS is only implemented on Linux; elsewhere it skips the test.
func PeakRSS(t testing.TB, pid int) int64 {
	t.Skip("SKIP: peak RSS is read from /proc, which only Linux has")
	return 0
}

// SchedClock is only implemented on Linux; elsewhere Waited is always 0.
type SchedClock struct{}

// StartSchedClock starts a SchedClock.
func StartSchedClock() *SchedClock { return &SchedClock{} }

// Waited is only implemented on Linux; it returns 0.
func (c *SchedClock) Waited() time.Duration { return 0 }
