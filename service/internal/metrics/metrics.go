// Package metrics keeps the service's counters and histograms and writes
// them, with gauges read at scrape time, in the Prometheus text exposition
// format (version 0.0.4). It is a few dozen lines where a client library
// would bring a dependency tree; the format is stable and small.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Labels are label name/value pairs: "agent", "a1", "status", "failed".
type Labels []string

func (l Labels) String() string {
	if len(l) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(l); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[i])
		b.WriteString(`="`)
		b.WriteString(escape(l[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

type family struct {
	name, help, typ string
	values          map[string]float64 // label string -> value
	hist            map[string]*histogram
	buckets         []float64
}

type histogram struct {
	counts []uint64
	sum    float64
	count  uint64
}

// Registry holds metric families. Safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
}

// New returns an empty registry.
func New() *Registry { return &Registry{families: map[string]*family{}} }

func (r *Registry) fam(name, help, typ string, buckets []float64) *family {
	f, ok := r.families[name]
	if !ok {
		f = &family{name: name, help: help, typ: typ, values: map[string]float64{}, hist: map[string]*histogram{}, buckets: buckets}
		r.families[name] = f
	}
	return f
}

// Counter declares a counter (so it is listed at zero before any Add).
func (r *Registry) Counter(name, help string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fam(name, help, "counter", nil)
}

// Add adds v to the counter name with labels.
func (r *Registry) Add(name string, v float64, labels Labels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fam(name, "", "counter", nil).values[labels.String()] += v
}

// Histogram declares a histogram with upper bounds buckets.
func (r *Registry) Histogram(name, help string, buckets []float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fam(name, help, "histogram", buckets)
}

// Observe records v in the histogram name.
func (r *Registry) Observe(name string, v float64, labels Labels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.families[name]
	if f == nil || f.typ != "histogram" {
		return
	}
	key := labels.String()
	h := f.hist[key]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(f.buckets))}
		f.hist[key] = h
	}
	for i, ub := range f.buckets {
		if v <= ub {
			h.counts[i]++
		}
	}
	h.sum += v
	h.count++
}

// Gauge is one gauge sample taken at scrape time.
type Gauge struct {
	Labels Labels
	Value  float64
}

// GaugeFamily is a gauge with its samples.
type GaugeFamily struct {
	Name, Help string
	Samples    []Gauge
}

// Write writes every family, and the gauges given, in the text format.
func (r *Registry) Write(w io.Writer, gauges []GaugeFamily) error {
	var b strings.Builder
	for _, g := range gauges {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", g.Name, g.Help, g.Name)
		for _, s := range g.Samples {
			fmt.Fprintf(&b, "%s%s %s\n", g.Name, s.Labels, num(s.Value))
		}
	}
	r.mu.Lock()
	names := make([]string, 0, len(r.families))
	for n := range r.families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := r.families[n]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		if f.typ == "counter" {
			keys := sortedKeys(f.values)
			if len(keys) == 0 {
				fmt.Fprintf(&b, "%s 0\n", f.name)
			}
			for _, k := range keys {
				fmt.Fprintf(&b, "%s%s %s\n", f.name, k, num(f.values[k]))
			}
			continue
		}
		keys := make([]string, 0, len(f.hist))
		for k := range f.hist {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h := f.hist[k]
			inner := strings.TrimSuffix(strings.TrimPrefix(k, "{"), "}")
			sep := ""
			if inner != "" {
				sep = ","
			}
			for i, ub := range f.buckets {
				fmt.Fprintf(&b, "%s_bucket{%s%sle=\"%s\"} %d\n", f.name, inner, sep, num(ub), h.counts[i])
			}
			fmt.Fprintf(&b, "%s_bucket{%s%sle=\"+Inf\"} %d\n", f.name, inner, sep, h.count)
			fmt.Fprintf(&b, "%s_sum%s %s\n%s_count%s %d\n", f.name, k, num(h.sum), f.name, k, h.count)
		}
	}
	r.mu.Unlock()
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
