package schema

import (
	"testing"
	"testing/fstest"
)

func TestStepsAreOrderedWithoutGaps(t *testing.T) {
	fsys := fstest.MapFS{
		"s/002_more.sql":    {Data: []byte("B")},
		"s/001_initial.sql": {Data: []byte("A")},
		"s/README":          {Data: []byte("ignored")},
	}
	steps, err := Steps(fsys, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].SQL != "A" || steps[1].SQL != "B" || Latest(steps) != 2 {
		t.Fatalf("steps = %+v", steps)
	}
	if got := After(steps, 1); len(got) != 1 || got[0].Version != 2 {
		t.Fatalf("After(1) = %+v", got)
	}
	if got := After(steps, 2); len(got) != 0 {
		t.Fatalf("After(2) = %+v", got)
	}
}

func TestStepsRefuseGapsAndBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap":       {"s/001_a.sql": {}, "s/003_c.sql": {}},
		"duplicate": {"s/001_a.sql": {}, "s/001_b.sql": {}},
		"bad name":  {"s/initial.sql": {}},
		"empty":     {"s/x.txt": {}},
	} {
		if _, err := Steps(fsys, "s"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
