package telemetry

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// sampler decides, at a span's start, whether it is recorded and
// exported: the samplers of OTEL_TRACES_SAMPLER that the OpenTelemetry
// SDKs provide, with the same decisions (a trace id ratio compares the
// same bits of the trace id as the Go SDK, so that corral and an agent
// that samples by ratio agree).
type sampler struct {
	parentBased bool    // follow a valid parent's decision
	ratio       float64 // for roots (or all spans when not parent based): 1 always, 0 never
	bound       uint64
}

// parseSampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. An
// unknown sampler or a bad ratio is an error; the caller falls back to
// the default, parentbased_always_on.
func parseSampler(name, arg string) (sampler, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	s := sampler{parentBased: true, ratio: 1}
	switch name {
	case "", "parentbased_always_on":
	case "always_on":
		s.parentBased = false
	case "always_off":
		s.parentBased, s.ratio = false, 0
	case "parentbased_always_off":
		s.ratio = 0
	case "traceidratio", "parentbased_traceidratio":
		s.parentBased = name == "parentbased_traceidratio"
		r := 1.0
		if strings.TrimSpace(arg) != "" {
			var err error
			if r, err = strconv.ParseFloat(strings.TrimSpace(arg), 64); err != nil || r < 0 || r > 1 {
				return sampler{parentBased: true, ratio: 1}, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q: want a ratio from 0 to 1", arg)
			}
		}
		s.ratio = r
	default:
		return s, fmt.Errorf("OTEL_TRACES_SAMPLER %q is not supported: want always_on, always_off, traceidratio or their parentbased_ forms", name)
	}
	if s.ratio > 0 && s.ratio < 1 {
		s.bound = uint64(s.ratio * (1 << 63))
	}
	return s, nil
}

// sample decides for a span of trace id under parent.
func (s sampler) sample(parent trace.SpanContext, id trace.TraceID) bool {
	if s.parentBased && parent.IsValid() {
		return parent.IsSampled()
	}
	switch {
	case s.ratio >= 1:
		return true
	case s.ratio <= 0:
		return false
	}
	return binary.BigEndian.Uint64(id[8:16])>>1 < s.bound
}
