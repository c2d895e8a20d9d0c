package web

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/corralrun/corral"
)

// The chart's geometry, in SVG user units (it scales to its box).
const (
	chartW       = 960
	chartLeft    = 64
	chartRight   = 12
	countTop     = 24
	countH       = 96
	durTop       = 154
	durH         = 100
	axisY        = 276
	chartH       = 290
	chartBuckets = 24
	maxDots      = 1500
)

// chart is a server-rendered SVG chart of runs (stacked bars of outcomes
// per time bucket) and durations (one dot per run on a log scale), with
// a summary and a data table for readers who do not see it.
type chart struct {
	W, H           int
	Summary        string
	Empty          bool
	Segments       []segment
	Dots           []dot
	XTicks, YTicks []tick
	CountTicks     []tick
	Rows           []chartRow
	PlotX, PlotW   float64
	CountY, DurY   float64
	CountH, DurH   float64
	// Right, CountBase and DurBase are the plot's right edge and the
	// baselines of its two panels.
	Right, CountBase, DurBase float64
}

type segment struct {
	X, Y, W, H float64
	Tone       string
	Label      string
}

type dot struct {
	X, Y  float64
	Tone  string
	Label string
}

type tick struct {
	X, Y  float64
	Label string
}

type chartRow struct {
	Label                            string
	Succeeded, Failed, Other, Active int
	Median                           string
}

// buildChart charts the executions created in [from, to).
func buildChart(execs []*corral.Execution, from, to, now time.Time, rangeLabel string) *chart {
	c := &chart{W: chartW, H: chartH, PlotX: chartLeft, PlotW: chartW - chartLeft - chartRight,
		CountY: countTop, CountH: countH, DurY: durTop, DurH: durH}
	c.Right, c.CountBase, c.DurBase = c.PlotX+c.PlotW, c.CountY+c.CountH, c.DurY+c.DurH
	if !to.After(from) {
		to = from.Add(time.Hour)
	}
	span := to.Sub(from)
	bw := span / chartBuckets
	type bucket struct {
		ok, bad, other, active int
		durs                   []time.Duration
	}
	buckets := make([]bucket, chartBuckets)
	var all []time.Duration
	var total, ok, bad int
	var longest time.Duration
	x := func(t time.Time) float64 { return c.PlotX + c.PlotW*float64(t.Sub(from))/float64(span) }
	type run struct {
		at   time.Time
		d    time.Duration
		tone string
		id   string
		st   corral.Status
	}
	var runs []run
	for _, e := range execs {
		if e.CreatedAt.Before(from) || !e.CreatedAt.Before(to) {
			continue
		}
		i := min(int(e.CreatedAt.Sub(from)/bw), chartBuckets-1)
		b := &buckets[i]
		total++
		switch statusTone(e.Status) {
		case "ok":
			b.ok++
			ok++
		case "bad":
			b.bad++
			bad++
		case "live":
			b.active++
		default:
			b.other++
		}
		d := execDuration(e, now)
		if d >= 0 && e.StartedAt != nil {
			b.durs = append(b.durs, d)
			all = append(all, d)
			longest = max(longest, d)
			if len(runs) < maxDots {
				runs = append(runs, run{e.CreatedAt, d, statusTone(e.Status), e.ID, e.Status})
			}
		}
	}
	c.Empty = total == 0
	// Bars.
	maxCount := 1
	for _, b := range buckets {
		maxCount = max(maxCount, b.ok+b.bad+b.other+b.active)
	}
	maxCount = niceCeil(maxCount)
	slot := c.PlotW / chartBuckets
	for i, b := range buckets {
		bx := c.PlotX + float64(i)*slot + 1
		y := c.CountY + c.CountH
		start := from.Add(time.Duration(i) * bw)
		label := bucketLabel(start, start.Add(bw), span)
		for _, s := range []struct {
			n    int
			tone string
			what string
		}{{b.ok, "ok", "succeeded"}, {b.bad, "bad", "failed"}, {b.other, "muted", "cancelled or rejected"}, {b.active, "live", "queued or running"}} {
			if s.n == 0 {
				continue
			}
			h := c.CountH * float64(s.n) / float64(maxCount)
			y -= h
			c.Segments = append(c.Segments, segment{X: bx, Y: y, W: slot - 2, H: h, Tone: s.tone, Label: fmt.Sprintf("%s: %d %s", label, s.n, s.what)})
		}
		if b.ok+b.bad+b.other+b.active > 0 {
			row := chartRow{Label: label, Succeeded: b.ok, Failed: b.bad, Other: b.other, Active: b.active, Median: "—"}
			if len(b.durs) > 0 {
				row.Median = fmtDuration(median(b.durs))
			}
			c.Rows = append(c.Rows, row)
		}
	}
	for _, n := range []int{0, maxCount / 2, maxCount} {
		c.CountTicks = append(c.CountTicks, tick{X: c.PlotX - 6, Y: c.CountY + c.CountH - c.CountH*float64(n)/float64(maxCount), Label: fmt.Sprint(n)})
	}
	// Durations on a log scale from 10 ms to at least an hour.
	lo, hi := math.Log10(0.01), math.Log10(math.Max(3600, longest.Seconds()))
	y := func(d time.Duration) float64 {
		s := math.Max(d.Seconds(), 0.01)
		return c.DurY + c.DurH - c.DurH*(math.Log10(s)-lo)/(hi-lo)
	}
	for _, r := range runs {
		c.Dots = append(c.Dots, dot{X: x(r.at), Y: y(r.d), Tone: r.tone, Label: fmt.Sprintf("%s · %s · %s", r.id, r.st, fmtDuration(r.d))})
	}
	for _, t := range []struct {
		d time.Duration
		l string
	}{{10 * time.Millisecond, "10 ms"}, {time.Second, "1 s"}, {time.Minute, "1 min"}, {time.Hour, "1 h"}} {
		c.YTicks = append(c.YTicks, tick{X: c.PlotX - 6, Y: y(t.d), Label: t.l})
	}
	for i := 0; i <= 4; i++ {
		t := from.Add(span * time.Duration(i) / 4)
		c.XTicks = append(c.XTicks, tick{X: x(t), Y: axisY, Label: tickLabel(t, span)})
	}
	if c.Empty {
		c.Summary = "No runs in " + rangeLabel + "."
	} else {
		c.Summary = fmt.Sprintf("%d runs in %s: %d succeeded, %d failed, %d other.", total, rangeLabel, ok, bad, total-ok-bad)
		if len(all) > 0 {
			c.Summary += fmt.Sprintf(" Median duration %s, longest %s.", fmtDuration(median(all)), fmtDuration(longest))
		}
	}
	return c
}

// execDuration is how long e ran (or has been running), or -1.
func execDuration(e *corral.Execution, now time.Time) time.Duration {
	switch {
	case e.DurationMS > 0:
		return time.Duration(e.DurationMS) * time.Millisecond
	case e.StartedAt != nil && e.FinishedAt != nil:
		return e.FinishedAt.Sub(*e.StartedAt)
	case e.StartedAt != nil && !e.Status.Terminal():
		return now.Sub(*e.StartedAt)
	}
	return -1
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// niceCeil rounds n up to 1, 2, 5 times a power of ten.
func niceCeil(n int) int {
	p := 1
	for {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
		p *= 10
	}
}

func tickLabel(t time.Time, span time.Duration) string {
	t = t.UTC()
	if span <= 48*time.Hour {
		return t.Format("15:04")
	}
	return t.Format("Jan 2")
}

func bucketLabel(a, b time.Time, span time.Duration) string {
	a, b = a.UTC(), b.UTC()
	if span <= 48*time.Hour {
		return a.Format("Jan 2 15:04") + "–" + b.Format("15:04") + " UTC"
	}
	return a.Format("Jan 2 15:04") + "–" + b.Format("Jan 2 15:04") + " UTC"
}
