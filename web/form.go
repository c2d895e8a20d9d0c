package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/corralrun/corral"
)

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) (int, error) { return strconv.Atoi(strings.TrimSpace(s)) }

// parseDur reads a form's duration field: empty, a Go duration or a
// number of seconds.
func parseDur(v string) (corral.Duration, error) {
	d, err := corral.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, errors.New("Enter a duration such as 90s, 15m or 1h30m, or leave it empty.")
	}
	if d < 0 {
		return 0, errors.New("A duration cannot be negative.")
	}
	return d, nil
}

// fieldView is an input of the agent form for a setting of
// corral.AgentFields(), with its label and hint as they are declared there.
type fieldView struct {
	Key, Label, Help, Value, Error string
	Numeric                        bool
}

// tableField is the input of setting key in form f.
func tableField(f *agentForm, key string) fieldView {
	fld := corral.AgentFieldByKey(key)
	if fld == nil {
		return fieldView{Key: key, Label: key}
	}
	return fieldView{Key: key, Label: fld.Label, Help: capitalize(strings.ReplaceAll(fld.Help, "`", "")) + ".",
		Value: f.Values[key], Error: f.Errors[key], Numeric: fld.Kind == corral.FieldInt || fld.Kind == corral.FieldNumber}
}
