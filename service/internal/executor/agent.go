package executor

import (
	"fmt"
	"slices"

	"github.com/corralrun/corral"
)

// ServiceSecrets names the variables of the service's own environment that
// hold its secrets: no task ever receives them, whatever an agent's
// PassEnv or the worker's --pass-env say.
var ServiceSecrets = []string{"CORRAL_TOKEN", "CORRAL_DB"}

// CheckAgent applies to a (already normalized, see corral.Agent.Normalize)
// the rules of the layer that runs its tasks: a headless command must take
// its prompt where no option is parsed (CheckPromptPlacement), and no
// variable it passes on may be one of the service's own secrets.
func CheckAgent(a *corral.Agent) error {
	if a.Kind == corral.KindHeadless {
		if err := CheckPromptPlacement(a.Command); err != nil {
			return err
		}
	}
	for _, n := range a.PassEnv {
		if err := CheckPassEnv(n); err != nil {
			return fmt.Errorf("pass_env: %w", err)
		}
	}
	return nil
}

// CheckPassEnv checks a variable that may be passed on from the service's
// environment to its tasks: a valid name (corral.ValidEnvName) that is not
// one of ServiceSecrets.
func CheckPassEnv(name string) error {
	if err := corral.ValidEnvName(name); err != nil {
		return err
	}
	if slices.Contains(ServiceSecrets, name) {
		return fmt.Errorf("%s is the service's own secret: it is never passed to tasks", name)
	}
	return nil
}
