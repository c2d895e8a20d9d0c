// Package schema reads a driver's corral schema as numbered steps, so that
// each change to the tables is one file applied once, in order, on every
// database a driver opens.
//
// A driver embeds a directory of files named NNN_what.sql (001_initial.sql,
// 002_sessions.sql, ...): step N moves a database from version N-1 to N.
// Numbers start at 1 and leave no gaps; a step, once released, never
// changes.
package schema

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Step is one schema change.
type Step struct {
	Version int    // the version the database has after the step
	Name    string // the file name, for messages
	SQL     string
}

// Steps reads the steps in dir of fsys, in order, checking the numbering.
func Steps(fsys fs.FS, dir string) ([]Step, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var steps []Step
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("schema: step %s: want NNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		steps = append(steps, Step{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Version < steps[j].Version })
	for i, s := range steps {
		if s.Version != i+1 {
			return nil, fmt.Errorf("schema: step %s: expected version %d (no gaps, no duplicates)", s.Name, i+1)
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("schema: no steps in %s", dir)
	}
	return steps, nil
}

// Latest returns the version the last step reaches.
func Latest(steps []Step) int { return steps[len(steps)-1].Version }

// After returns the steps that follow version v.
func After(steps []Step, v int) []Step {
	if v >= len(steps) {
		return nil
	}
	return steps[v:]
}
