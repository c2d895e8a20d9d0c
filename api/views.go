package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/service"
)

// public returns what the API may send of v: an agent without the values
// of its env (their names are in env_names). Every answer goes through
// it. (An execution is sent as it is: the domain record holds nothing
// that only its worker needs.)
func public(v any) any {
	if mutant.APISendsEnvValues {
		return v
	}
	switch v := v.(type) {
	case *corral.Agent:
		return publicAgent(v)
	case AgentList:
		out := AgentList{Agents: make([]*corral.Agent, len(v.Agents))}
		for i, a := range v.Agents {
			out.Agents[i] = publicAgent(a)
		}
		return out
	}
	return v
}

// publicAgent is a with its env values replaced by their names.
func publicAgent(a *corral.Agent) *corral.Agent {
	if a == nil {
		return nil
	}
	c := *a
	c.EnvNames = envNames(a.Env)
	c.Env = nil
	c.Webhooks = nil
	for _, w := range a.Webhooks {
		w.SecretSet, w.Secret = w.Secret != "", ""
		c.Webhooks = append(c.Webhooks, w)
	}
	return &c
}

// keepSecrets gives each webhook of next that was sent back without its
// secret the secret of the webhook of cur with the same URL: clients
// never see the secrets they would otherwise have to send back.
func keepSecrets(next, cur []corral.Webhook) {
	for i := range next {
		if next[i].Secret != "" {
			continue
		}
		for _, w := range cur {
			if w.URL == next[i].URL {
				next[i].Secret = w.Secret
			}
		}
	}
}

func envNames(env map[string]string) []string {
	if len(env) == 0 {
		return nil
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// mergeAgent applies the JSON object patch of r to cur. Its "env" is
// merged name by name, since clients never see the values they would
// otherwise have to send back: a string sets a variable, null removes
// it, and "env": null removes them all. "env_names" is read-only.
func (s *Server) mergeAgent(w http.ResponseWriter, r *http.Request, cur *corral.Agent) (*corral.Agent, error) {
	patch, err := s.decodePatch(w, r)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range cur.Env {
		env[k] = v
	}
	if raw, ok := patch["env"]; ok {
		var changes map[string]*string
		if err := json.Unmarshal(raw, &changes); err != nil {
			return nil, fmt.Errorf("%w: env: want an object of NAME: \"value\" (or null to remove NAME)", service.ErrInvalid)
		}
		if changes == nil {
			clear(env)
		}
		for k, v := range changes {
			if v == nil {
				delete(env, k)
			} else {
				env[k] = *v
			}
		}
		delete(patch, "env")
	}
	if raw, ok := patch["env_names"]; ok {
		var names []string
		if json.Unmarshal(raw, &names) != nil || !slices.Equal(names, envNames(cur.Env)) {
			return nil, fmt.Errorf("%w: env_names is read-only: set or remove variables through env", service.ErrInvalid)
		}
		delete(patch, "env_names")
	}
	var a corral.Agent
	if err := overlay(patch, cur, &a, "name", "created_at", "updated_at"); err != nil {
		return nil, err
	}
	a.Env = env
	if len(env) == 0 {
		a.Env = nil
	}
	keepSecrets(a.Webhooks, cur.Webhooks)
	return &a, nil
}
