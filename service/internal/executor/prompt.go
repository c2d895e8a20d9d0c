package executor

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// PromptPlaceholder marks where a headless agent's command template takes
// the task's prompt.
const PromptPlaceholder = "{{prompt}}"

// CheckPromptPlacement refuses a headless command template whose prompt
// would land where the program parses options, so that a prompt such as
// "--dangerously-skip-permissions" could never become an option. A
// placeholder is safe embedded after other text ("--prompt={{prompt}}"),
// after a "--" argument, or among the positional parameters of a shell's
// -c script (sh -c SCRIPT NAME {{prompt}}). Without a placeholder the
// prompt is appended after a "--" (see PromptArgs), which is safe too.
func CheckPromptPlacement(template []string) error {
	for i, a := range template {
		if !strings.Contains(a, PromptPlaceholder) {
			continue
		}
		if i == 0 {
			return errors.New("command: the program cannot be the prompt: put the program first and " + PromptPlaceholder + " after it")
		}
		if !promptPositional(template, i) {
			fixed := append(slices.Clone(template[:i]), append([]string{"--"}, template[i:]...)...)
			return fmt.Errorf("command: %s in argument %d would land where %s parses options (a prompt starting with '-' would become an option): put \"--\" before it, as in %q, or write it as an option's value (--prompt=%s)",
				PromptPlaceholder, i, filepath.Base(template[0]), fixed, PromptPlaceholder)
		}
	}
	return nil
}

// promptPositional reports whether the prompt at argument i of template
// can never be read as an option.
func promptPositional(template []string, i int) bool {
	if !strings.HasPrefix(template[i], PromptPlaceholder) {
		return true // embedded: the argument starts with text of its own
	}
	if slices.Contains(template[1:i], "--") {
		return true
	}
	// sh -c SCRIPT NAME ARGS...: what follows the script is positional.
	switch filepath.Base(template[0]) {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash":
		if c := slices.Index(template[1:i], "-c"); c >= 0 && c+2 < i {
			return true
		}
	}
	return false
}

// PromptArgs returns the command line of a headless agent for prompt:
// every argument holding the placeholder gets the prompt. Without one, the
// prompt is appended, after a "--" unless it would already be positional.
// The error reports a template CheckPromptPlacement refuses when prompt
// starts with '-' (an agent stored before the check existed): such a run
// must not start.
func PromptArgs(template []string, prompt string) ([]string, error) {
	args := make([]string, 0, len(template)+2)
	found := false
	for i, a := range template {
		if strings.Contains(a, PromptPlaceholder) {
			found = true
			if i == 0 {
				return nil, fmt.Errorf("the agent's command has %s as its program: update it to name the program first", PromptPlaceholder)
			}
			if strings.HasPrefix(prompt, "-") && !promptPositional(template, i) {
				return nil, fmt.Errorf("the prompt starts with '-' and the agent's command puts it where options are parsed: update the agent's command to have \"--\" before %s", PromptPlaceholder)
			}
			a = strings.ReplaceAll(a, PromptPlaceholder, prompt)
		}
		args = append(args, a)
	}
	if !found {
		if !promptPositional(append(slices.Clone(template), PromptPlaceholder), len(template)) {
			args = append(args, "--")
		}
		args = append(args, prompt)
	}
	return args, nil
}
