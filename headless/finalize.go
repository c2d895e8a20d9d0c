package headless

import "time"

// Finalization is corral's own record of how soon it ended a turn the
// agent ended: when it read the line that ended the turn, when the result
// was ready (Wait returned), and how long that took by corral's own clock
// (the wall clock less the time the machine kept the threads doing the
// work waiting for a CPU). The guarantee is 100 ms; it is a millisecond or
// less in practice.
//
// The work is done by two goroutines: the stream's reader, which parses
// the line and signals the end, and the turn's own, which builds the
// result. The turn's goroutine keeps one OS thread for its life, so the
// time that thread sat runnable on a run queue (Linux,
// /proc/TID/schedstat) is the machine's; so is the reader's thread's,
// from the read to the signal, when it stayed on one thread. Outside Linux
// nothing is subtracted.
type Finalization struct {
	// Seen is when corral read the bytes that carried the line.
	Seen time.Time `json:"seen"`
	// At is when the result was ready.
	At time.Time `json:"at"`
	// Late is how long that took by corral's own clock; Starved what the
	// machine withheld, not counted.
	Late    time.Duration `json:"-"`
	Starved time.Duration `json:"-"`
	LateMS  float64       `json:"late_ms"`
	// StarvedMS is Starved in milliseconds.
	StarvedMS float64 `json:"starved_ms"`
}

// threadMark is a thread's run-queue wait read at a moment.
type threadMark struct {
	at   time.Time
	tid  int
	wait time.Duration
}

func markThread() threadMark {
	tid, w := threadWait()
	return threadMark{at: time.Now(), tid: tid, wait: w}
}

// since returns the run-queue wait of m's thread since m, read on the
// calling thread; 0 when that is another thread.
func (m threadMark) since(now threadMark) time.Duration {
	if m.tid == 0 || m.tid != now.tid {
		return 0
	}
	return max(now.wait-m.wait, 0)
}

// finalization accounts for a turn ended by the line read at seen, whose
// reader signalled the end at signalled, and which the turn's goroutine,
// asleep since slept, finalized now.
func finalization(seen, signalled, slept threadMark) *Finalization {
	now := markThread()
	f := &Finalization{Seen: seen.at, At: now.at}
	wall := now.at.Sub(seen.at)
	f.Starved = min(seen.since(signalled)+slept.since(now), max(wall, 0))
	f.Late = max(wall-f.Starved, 0)
	f.LateMS, f.StarvedMS = ms(f.Late), ms(f.Starved)
	return f
}
