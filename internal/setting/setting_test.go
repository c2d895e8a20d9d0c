package setting

import (
	"testing"
	"time"
)

func TestOr(t *testing.T) {
	if got := Or(0, 5); got != 5 {
		t.Errorf("unset: %d, want the default 5", got)
	}
	if got := Or(-1, 5); got != 0 {
		t.Errorf("negative: %d, want 0 (off)", got)
	}
	if got := Or(3*time.Second, time.Minute); got != 3*time.Second {
		t.Errorf("set: %v, want 3s", got)
	}
}
