package telemetry

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of a Config's zero values.
const (
	// DefaultFlushTimeout bounds the flush at exit.
	DefaultFlushTimeout = 5 * time.Second
	// ExporterName is the companion's program name, looked up beside
	// corral's executable and then in PATH.
	ExporterName = "corral-otlp"
	// ExporterEnv, when set, names the companion's path.
	ExporterEnv = "CORRAL_OTLP_EXPORTER"
)

// Config says whether and how the CLI exports spans. Its string fields,
// when set (from the CLI's flags), win over the OTEL_* variables they
// stand for.
type Config struct {
	// Endpoint is OTEL_EXPORTER_OTLP_ENDPOINT: a URL such as
	// http://localhost:4318 (HTTP) or http://localhost:4317 (gRPC).
	Endpoint string
	// Protocol is OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the
	// default) or grpc.
	Protocol string
	// ServiceName is OTEL_SERVICE_NAME; empty means "corral".
	ServiceName string

	// FlushTimeout bounds the flush at Shutdown. Zero means
	// DefaultFlushTimeout.
	FlushTimeout time.Duration

	// Exporter is the companion's path; empty means $CORRAL_OTLP_EXPORTER,
	// else corral-otlp beside the running executable, else in PATH.
	Exporter string

	// Command and Version describe this corral process in the spans'
	// resource.
	Command, Version string

	// Env is the environment the OTEL_* variables are read from; nil
	// means the process's own.
	Env []string

	// Warn receives what the operator should know (the companion is
	// missing, spans were dropped); nil means standard error.
	Warn func(msg string)
}

// lookup returns the value of name in c.Env (or the process's).
func (c *Config) lookup(name string) string {
	if c.Env == nil {
		return os.Getenv(name)
	}
	for i := len(c.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(c.Env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Enabled reports whether telemetry is on: an endpoint is given, and the
// SDK and the trace exporter are not switched off.
func (c *Config) Enabled() bool {
	if strings.EqualFold(strings.TrimSpace(c.lookup("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(c.lookup("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return c.Endpoint != "" || c.lookup("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.lookup("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// OTELEnv returns the OTEL_* variables of the environment with the
// Config's fields applied over them, as "KEY=VALUE": what configures the
// exporter, and what an operator may pass on to the processes corral
// starts.
func (c *Config) OTELEnv() []string {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	set := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := set[k]; !ok {
			order = append(order, k)
		}
		set[k] = v
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "OTEL_") {
			put(k, v)
		}
	}
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": c.Endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL": c.Protocol,
		"OTEL_SERVICE_NAME":           c.ServiceName,
	} {
		if v != "" {
			put(k, v)
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+set[k])
	}
	return out
}

func (c *Config) flushTimeout() time.Duration {
	if c.FlushTimeout > 0 {
		return c.FlushTimeout
	}
	return DefaultFlushTimeout
}

// ErrNoExporter means the companion program was not found.
var ErrNoExporter = errors.New(ExporterName + " not found")

// exporterPath finds the companion: Config.Exporter, $CORRAL_OTLP_EXPORTER,
// beside the running executable, in PATH.
func (c *Config) exporterPath() (string, error) {
	if c.Exporter != "" {
		return c.Exporter, nil
	}
	if p := c.lookup(ExporterEnv); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), ExporterName+exeSuffix)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(ExporterName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w beside corral or in PATH: install it with go install github.com/corralrun/corral/cmd/%s, or name it in $%s; spans are not exported", ErrNoExporter, ExporterName, ExporterEnv)
}
