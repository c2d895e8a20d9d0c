package metrics

import (
	"strings"
	"testing"
)

func TestWriteProducesPrometheusTextFormat(t *testing.T) {
	r := New()
	r.Counter("corral_x_total", "x things")
	r.Add("corral_x_total", 2, Labels{"agent", `a"b`})
	r.Histogram("corral_d_seconds", "durations", []float64{0.1, 1})
	r.Observe("corral_d_seconds", 0.5, Labels{"agent", "a"})
	var b strings.Builder
	r.Write(&b, []GaugeFamily{{Name: "corral_g", Help: "g", Samples: []Gauge{{Labels{"agent", "a"}, 3}}}})
	out := b.String()
	for _, want := range []string{
		"# TYPE corral_g gauge\ncorral_g{agent=\"a\"} 3\n",
		`corral_x_total{agent="a\"b"} 2`,
		`corral_d_seconds_bucket{agent="a",le="0.1"} 0`,
		`corral_d_seconds_bucket{agent="a",le="1"} 1`,
		`corral_d_seconds_bucket{agent="a",le="+Inf"} 1`,
		`corral_d_seconds_count{agent="a"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
