package web

import (
	"net/http"
	"strings"

	"github.com/corralrun/corral"
)

// sandboxForm is an agent's sandbox as the form shows it: lists one entry
// per line.
type sandboxForm struct {
	Mode, Network                                  string
	Writable, DenyRead, AllowHosts, AllowUnixSocks string
}

func sandboxFormOf(sb corral.Sandbox) sandboxForm {
	return sandboxForm{Mode: sb.Mode.String(), Network: sb.Network.String(),
		Writable: strings.Join(sb.Writable, "\n"), DenyRead: strings.Join(sb.DenyRead, "\n"),
		AllowHosts: strings.Join(sb.AllowHosts, "\n"), AllowUnixSocks: strings.Join(sb.AllowUnixSockets, "\n")}
}

func readSandboxForm(r *http.Request) sandboxForm {
	lines := func(k string) string { return strings.TrimSpace(strings.ReplaceAll(r.PostFormValue(k), "\r\n", "\n")) }
	return sandboxForm{Mode: strings.TrimSpace(r.PostFormValue("sandbox")), Network: strings.TrimSpace(r.PostFormValue("network")),
		Writable: lines("writable"), DenyRead: lines("deny_read"), AllowHosts: lines("allow_hosts"), AllowUnixSocks: lines("allow_unix_sockets")}
}

// sandbox returns the settings typed, checked; an empty mode means off.
func (f sandboxForm) sandbox() (corral.Sandbox, error) {
	var sb corral.Sandbox
	var err error
	if sb.Mode, err = corral.ParseSandboxMode(f.Mode); err != nil {
		return sb, err
	}
	if !sb.Enabled() {
		return corral.Sandbox{}, nil // the other fields only matter under a sandbox
	}
	if sb.Network, err = corral.ParseNetwork(f.Network); err != nil {
		return sb, err
	}
	sb.Writable, sb.DenyRead = strings.Fields(f.Writable), strings.Fields(f.DenyRead)
	sb.AllowHosts, sb.AllowUnixSockets = strings.Fields(f.AllowHosts), strings.Fields(f.AllowUnixSocks)
	return sb, sb.Validate()
}

// sandboxText describes a sandbox for people: "workspace, network none",
// or "off".
func sandboxText(sb corral.Sandbox) string {
	if !sb.Enabled() {
		return "off"
	}
	s := sb.Mode.String() + ", network " + sb.Network.String()
	if len(sb.AllowHosts) > 0 {
		s += " (allowed: " + strings.Join(sb.AllowHosts, ", ") + ")"
	}
	return s
}

// reportText describes what held a run: mode, network and mechanisms.
func reportText(r *corral.SandboxReport) string {
	s := r.Mode.String() + ", network " + r.Network.String()
	if len(r.Mechanisms) > 0 {
		s += " (" + strings.Join(r.Mechanisms, ", ") + ")"
	}
	return s
}
